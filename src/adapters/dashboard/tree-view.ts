/**
 * The live supervision tree as the dashboard draws it: the hall, its slots
 * and binding queues, under each its running runs and waiting missions (in
 * the order they will start), under a run its open permission questions;
 * beside them the cron jobs with their next times, the Telegram bots with
 * their poll health and the ACP face. Built from what `status`, `ps` and
 * `queue` already answer, so the tree and the terminal never disagree.
 */
import { z } from 'zod';
import type { Envelope, EventBus } from '../../ports/bus.js';
import type { HallQueries } from '../../ports/hall-queries.js';
import type { ClusterRuns } from './run-history.js';
import { definedFields } from '../../domain/defined-fields.js';

export interface TreeRun {
  id: string;
  pid: number;
  mission: string;
  /** Seconds since it started. */
  age: number;
  binding?: string;
  /** In a shared cluster: the hall that runs it. */
  hall?: string;
  questions: OpenQuestion[];
}

export interface TreeWaiting {
  mission_id: string;
  position: number;
  name: string;
  mission: string;
  age?: number;
}

export interface TreeQueue {
  /** A slot's queue or a binding's. */
  kind: 'slot' | 'binding';
  name: string;
  runs: TreeRun[];
  waiting: TreeWaiting[];
}

/** A `permission.asked` event whose `permission.answered` has not come yet. */
export type OpenQuestion = Record<string, unknown> & { id: string };

export interface HallTree {
  /** `id`: this hall's id in a shared cluster. */
  hall: { root: string; pid: number; running: number; starting: number; id?: string };
  queues: TreeQueue[];
  cron: Array<Record<string, unknown> & { id: string }>;
  telegram: Array<Record<string, unknown> & { bot: string }>;
  acp: Record<string, unknown> | null;
}

const liveRun = z.object({ id: z.string(), slot: z.string(), pid: z.number(), mission: z.string(), binding: z.string().optional() });
const runAge = z.object({ id: z.string(), age: z.number() });
const waitingMission = z.object({
  mission_id: z.string(),
  position: z.number(),
  name: z.string(),
  mission: z.string(),
  age: z.number().optional(),
});
const queueSchema = z.object({ slot: z.string().optional(), binding: z.string().optional(), missions: z.array(waitingMission) });
const record = z.record(z.string(), z.record(z.string(), z.unknown()));

/** A field of a reply that may be an error (then: undefined, which the schemas read as nothing). */
function field(reply: object, name: string): unknown {
  return Object.getOwnPropertyDescriptor(reply, name)?.value;
}

/**
 * The open permission questions, from the bus: a `permission.asked` stays
 * until a `permission.answered` with the same run `id` and question id.
 */
export class OpenQuestions {
  private readonly open = new Map<string, OpenQuestion>();
  private readonly unsubscribe: () => void;

  constructor(bus: EventBus) {
    this.unsubscribe = bus.subscribe({ filter: 'permission.', receive: (event) => this.note(event) });
  }

  private note(event: Envelope): void {
    if (event.type !== 'permission.asked' && event.type !== 'permission.answered') return;
    const key = `${event.id}\u0000${event.question}`;
    if (event.type === 'permission.asked') this.open.set(key, { ...event });
    else this.open.delete(key);
  }

  /** Forgets the questions of runs that ended (their channel closed with them). */
  forgetEnded(live: ReadonlySet<string>): void {
    for (const [key, q] of this.open) if (!live.has(q.id)) this.open.delete(key);
  }

  list(): OpenQuestion[] {
    return [...this.open.values()];
  }

  close(): void {
    this.unsubscribe();
  }
}

/** The tree; with `cluster`, every run names its hall and the other halls' runs hang under their slots too. */
export function hallTree(queries: HallQueries, questions: OpenQuestions, cluster?: ClusterRuns): HallTree {
  const status = queries.status();
  const runs = z.array(liveRun).catch([]).parse(field(queries.ps(), 'raiders'));
  const ages = new Map(
    z
      .array(runAge)
      .catch([])
      .parse(field(status, 'runs'))
      .map((r) => [r.id, r.age]),
  );
  const waiting = z.array(queueSchema).catch([]).parse(field(queries.queue(), 'queues'));
  questions.forgetEnded(new Set(runs.map((r) => r.id)));
  const open = questions.list();

  const queues = new Map<string, TreeQueue>();
  const queueOf = (kind: 'slot' | 'binding', name: string): TreeQueue => {
    const key = `${kind}:${name}`;
    let queue = queues.get(key);
    if (!queue) {
      queue = { kind, name, runs: [], waiting: [] };
      queues.set(key, queue);
    }
    return queue;
  };
  for (const run of runs)
    queueOf('slot', run.slot).runs.push({
      id: run.id,
      pid: run.pid,
      mission: run.mission,
      age: ages.get(run.id) ?? 0,
      ...definedFields({ binding: run.binding }),
      ...(cluster ? { hall: cluster.hall } : {}),
      questions: open.filter((q) => q.id === run.id),
    });
  for (const run of cluster?.remote ?? [])
    queueOf('slot', run.slot).runs.push({
      id: run.id,
      pid: run.pid ?? 0,
      mission: run.mission ?? '',
      age: Math.max(0, (Date.now() - run.started_at) / 1000),
      ...definedFields({ hall: run.hall }),
      questions: [],
    });
  for (const queue of waiting) {
    const node = queue.binding !== undefined ? queueOf('binding', queue.binding) : queueOf('slot', queue.slot ?? '');
    node.waiting.push(...queue.missions);
  }

  const cron = Object.entries(record.catch({}).parse(field(status, 'cron'))).map(([id, job]) => ({ ...job, id }));
  const telegram = Object.entries(record.catch({}).parse(field(status, 'telegram'))).map(([bot, health]) => ({ ...health, bot }));
  const acp = z
    .record(z.string(), z.unknown())
    .nullable()
    .catch(null)
    .parse(field(status, 'acp') ?? null);
  const number = (name: string): number => z.number().catch(0).parse(field(status, name));
  return {
    hall: {
      root: z.string().catch('').parse(field(status, 'root')),
      pid: process.pid,
      running: number('running'),
      starting: number('starting'),
      ...(cluster ? { id: cluster.hall } : {}),
    },
    queues: [...queues.values()].sort((a, b) => (a.kind === b.kind ? (a.name < b.name ? -1 : 1) : a.kind === 'slot' ? -1 : 1)),
    cron,
    telegram,
    acp,
  };
}
