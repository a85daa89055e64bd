/**
 * The figures behind the dashboard's charts: runs per minute by outcome and
 * durations per raider (median, p90) from the runs the events files hold, so
 * a restart keeps them for as long as `logs.keep_events` keeps the files; and
 * the queue depth over time from a sample file the dashboard keeps
 * (`.raider-hall/dashboard-queue.jsonl`: one `{"t": MS, "depth": N}` line per
 * change, at most one a second, the last day of them).
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { EventBus } from '../../ports/bus.js';
import type { HallQueries } from '../../ports/hall-queries.js';
import type { RunHistory, RunRow } from './run-history.js';
import type { QueueWaits } from './queue-waits.js';
import { readTimedLines, trimTimedLines } from './timed-lines.js';
import type { ChartUsage, RunUsages } from './run-usage.js';
import { eventsPath, type HallPaths } from '../../ports/hall-paths.js';

export const OUTCOMES = ['completed', 'failed', 'cancelled', 'interrupted'] as const;
/** The queue is looked at no more than once per this, however busy the bus. */
const SAMPLE_MS = 1000;
/** Samples older than this are dropped when the hall starts. */
const SAMPLES_KEPT_MS = 24 * 60 * 60 * 1000;

export const chartQuerySchema = z.object({
  minutes: z.coerce.number().int().min(1).max(1440).default(180),
  /** The days of the usage figures (runs' tokens and cost per raider per day). */
  days: z.coerce.number().int().min(1).max(90).default(7),
});

/** Where the figures come from besides the run history. */
export interface ChartSources {
  samples: QueueDepthSamples;
  waits: QueueWaits;
  usages: RunUsages;
  paths: HallPaths;
}

export interface ChartData {
  /** The window: epoch ms of its first minute, and its length. */
  from: number;
  minutes: number;
  /** Epoch seconds of each minute that had an ended run, and the runs per outcome that ended in it. */
  runs_per_minute: { minute: number[] } & Record<(typeof OUTCOMES)[number] | 'other', number[]>;
  /** Per raider (the slot without its digit prefix): ended runs in the window, median and p90 duration in seconds. */
  durations: Array<{ raider: string; runs: number; median: number; p90: number }>;
  /** Epoch seconds and the missions waiting then (all slot and binding queues). */
  queue_depth: { time: number[]; depth: number[] };
  /** Ended runs in the window by outcome. */
  outcomes: Record<(typeof OUTCOMES)[number] | 'other', number>;
  /** Per slot: runs that started in the window after waiting in a queue, median and p90 of the wait in seconds. */
  queue_wait: Array<{ slot: string; runs: number; median: number; p90: number }>;
  /**
   * Per UTC day (`YYYY-MM-DD`) and raider, over the last `days` days: the runs
   * that ended, those whose agent reported usage, their tokens (the context
   * each used at its end, summed) and cost per currency (each run's own
   * share of its agent session's cost, where its record says it).
   */
  usage: Array<{ day: string; raider: string; runs: number; reported: number; tokens: number; cost: Record<string, number> }>;
  days: number;
}

const sampleSchema = z.object({ t: z.number(), depth: z.number() });

/** The sample file of the queue depth, written as the queues change. */
export class QueueDepthSamples {
  private readonly file: string;
  private timer: NodeJS.Timeout | undefined;
  private last = -1;
  private readonly unsubscribe: () => void;

  constructor(
    root: string,
    bus: EventBus,
    private readonly queries: HallQueries,
    private readonly log: (line: string) => void,
  ) {
    this.file = path.join(root, '.raider-hall', 'dashboard-queue.jsonl');
    this.trim();
    this.unsubscribe = bus.subscribe({ filter: 'raider.', receive: () => this.schedule() });
    this.sample();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.sample();
    }, SAMPLE_MS);
  }

  private depth(): number {
    const status = this.queries.status();
    let depth = 0;
    for (const n of Object.values('queues' in status ? status.queues : {})) depth += n;
    for (const n of Object.values('binding_queues' in status ? status.binding_queues : {})) depth += n;
    return depth;
  }

  private sample(): void {
    const depth = this.depth();
    if (depth === this.last) return;
    this.last = depth;
    try {
      fs.appendFileSync(this.file, `${JSON.stringify({ t: Date.now(), depth })}\n`);
    } catch (err) {
      // The chart misses a point; the hall goes on.
      this.log(`dashboard: cannot write ${this.file}: ${String(err)}`);
    }
  }

  /** Keeps the last day of samples. */
  private trim(): void {
    trimTimedLines(this.file, sampleSchema, Date.now() - SAMPLES_KEPT_MS);
  }

  /** The samples since `from` (epoch ms), oldest first. */
  read(from: number): Array<{ t: number; depth: number }> {
    return readTimedLines(this.file, sampleSchema, from);
  }

  close(): void {
    this.unsubscribe();
    clearTimeout(this.timer);
  }
}

/** The value below which `q` of the sorted values lie (nearest rank). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

const round = (n: number): number => Math.round(n * 1000) / 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** The median and p90 of each list, by key, in key order. */
function spreads(lists: ReadonlyMap<string, number[]>): Array<{ key: string; runs: number; median: number; p90: number }> {
  return [...lists.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, values]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return { key, runs: sorted.length, median: round(quantile(sorted, 0.5)), p90: round(quantile(sorted, 0.9)) };
    });
}

/** A slot's raider: its name without the digit prefix of a numbered slot. */
const raiderOf = (slot: string): string => slot.replace(/^\d+/, '') || slot;

function usagePerDay(runs: ReadonlyArray<RunRow & { duration: number }>, sources: ChartSources, since: number): ChartData['usage'] {
  const rows = new Map<string, ChartData['usage'][number]>();
  for (const run of runs) {
    const end = run.started_at + run.duration * 1000;
    if (end < since) continue;
    const day = new Date(end).toISOString().slice(0, 10);
    const raider = raiderOf(run.slot);
    const key = `${day} ${raider}`;
    const row = rows.get(key) ?? { day, raider, runs: 0, reported: 0, tokens: 0, cost: {} };
    rows.set(key, row);
    row.runs++;
    const usage = recordedUsage(run) ?? sources.usages.of(eventsPath(sources.paths, run.id));
    if (usage === null) continue;
    row.reported++;
    row.tokens += usage.tokens;
    if (usage.cost) row.cost[usage.cost.currency] = round((row.cost[usage.cost.currency] ?? 0) + usage.cost.amount);
  }
  return [...rows.values()].sort((a, b) => (a.day === b.day ? (a.raider < b.raider ? -1 : 1) : a.day < b.day ? -1 : 1));
}

/**
 * What the run's record says it used (its raider.done's `usage`: an ACP run's last context, and its own share of
 * its agent session's cost, `run_cost`, else the last cost its agent said, which a later usage update without a
 * cost does not undo); null when it says no context.
 */
function recordedUsage(run: RunRow): ChartUsage | null {
  const used = run.usage?.context_used;
  if (used === undefined) return null;
  const cost = run.usage?.run_cost ?? run.usage?.cost;
  return cost !== undefined ? { tokens: used, cost } : { tokens: used };
}

export function chartData(
  history: RunHistory,
  sources: ChartSources,
  query: { minutes: number; days: number },
  now: number = Date.now(),
): ChartData {
  const { minutes, days } = query;
  const from = Math.floor((now - minutes * 60_000) / 60_000) * 60_000;
  const usageFrom = Math.floor(now / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
  const allEnded = history
    .list({ offset: 0, limit: Number.MAX_SAFE_INTEGER })
    .runs.filter(
      (r): r is RunRow & { duration: number } => r.duration !== null && r.started_at + r.duration * 1000 >= Math.min(from, usageFrom),
    );
  const ended = allEnded.filter((r) => r.started_at + r.duration * 1000 >= from);

  const perMinute = new Map<number, Map<string, number>>();
  const durations = new Map<string, number[]>();
  for (const run of ended) {
    const minute = Math.floor((run.started_at + run.duration * 1000) / 60_000) * 60;
    const counts = perMinute.get(minute) ?? new Map<string, number>();
    const outcome = (OUTCOMES as readonly string[]).includes(run.status) ? run.status : 'other';
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    perMinute.set(minute, counts);
    const raider = raiderOf(run.slot);
    const list = durations.get(raider);
    if (list === undefined) durations.set(raider, [run.duration]);
    else list.push(run.duration);
  }
  const minuteKeys = [...perMinute.keys()].sort((a, b) => a - b);
  const column = (outcome: string) => minuteKeys.map((m) => perMinute.get(m)?.get(outcome) ?? 0);

  const depth = sources.samples.read(from);
  const waits = new Map<string, number[]>();
  for (const w of sources.waits.read(from)) {
    const list = waits.get(w.slot);
    if (list === undefined) waits.set(w.slot, [w.wait]);
    else list.push(w.wait);
  }
  const total = (outcome: string) => column(outcome).reduce((a, b) => a + b, 0);
  return {
    from,
    minutes,
    runs_per_minute: {
      minute: minuteKeys,
      completed: column('completed'),
      failed: column('failed'),
      cancelled: column('cancelled'),
      interrupted: column('interrupted'),
      other: column('other'),
    },
    durations: spreads(durations).map(({ key, ...spread }) => ({ raider: key, ...spread })),
    queue_depth: { time: depth.map((s) => s.t / 1000), depth: depth.map((s) => s.depth) },
    outcomes: {
      completed: total('completed'),
      failed: total('failed'),
      cancelled: total('cancelled'),
      interrupted: total('interrupted'),
      other: total('other'),
    },
    queue_wait: spreads(waits).map(({ key, ...spread }) => ({ slot: key, ...spread })),
    usage: usagePerDay(allEnded, sources, usageFrom),
    days,
  };
}
