/**
 * Answers to the read-only control commands (`ps`, `status`, `attach`,
 * `logs`) from the run registry and the durable state, without the hall actor.
 */
import { type Answer, type ErrorReply, type ReplyTo, runNotFound } from '../../protocol/replies.js';
import type { HallPaths } from '../../ports/hall-paths.js';
import { runLog } from '../storage/slot-logs.js';
import type { HallQueries as HallQueriesContract, StatusSection } from '../../ports/hall-queries.js';
import type { HallStateStore } from '../../ports/state-store.js';
import { liveRun, liveRuns, type RunRegistry } from './run-registry.js';
import { ageSeconds, waitingIds, waitingQueues } from './waiting-missions.js';
import { journalLastWritten } from './session-journals.js';
import type { RefusedVerb, Whereabouts } from '../../ports/hall-queries.js';
import { DroppedMissions, refusal, whereabouts } from './whereabouts.js';
import { definedFields } from '../../domain/defined-fields.js';

/** The order of `ps`: by slot, then by run id. */
export function bySlotThenId(a: { slot: string; id: string }, b: { slot: string; id: string }): number {
  return a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export class HallQueries implements HallQueriesContract {
  private readonly sections: StatusSection[] = [];

  constructor(
    private readonly paths: HallPaths,
    private readonly registry: RunRegistry,
    private readonly store: HallStateStore,
    /** The missions dropped since the hall started (the supervisor feeds it the hall's events). */
    private readonly dropped: DroppedMissions = new DroppedMissions(),
    private readonly now: () => number = Date.now,
  ) {}

  addStatusSection(section: StatusSection): void {
    this.sections.push(section);
  }

  ps(): ReplyTo<'ps'> {
    const raiders = liveRuns(this.registry)
      .sort(bySlotThenId)
      .map((run) => ({
        slot: run.slot,
        pid: run.pid,
        base_name: run.base_name,
        mission: run.mission,
        id: run.id,
        ...definedFields({ session: run.session, binding: run.binding }),
      }));
    return { raiders };
  }

  status(): Answer<'status'> {
    const runs = liveRuns(this.registry);
    const now = this.now();
    const queues: Record<string, number> = {};
    for (const [slot, queue] of this.store.state.slotQueues) queues[slot] = queue.length;
    const bindingQueues: Record<string, number> = {};
    for (const [binding, queue] of this.store.state.bindingQueues) if (queue.length > 0) bindingQueues[binding] = queue.length;
    const reply: Answer<'status'> = {
      running: runs.length,
      root: this.paths.root,
      slots: [...new Set(runs.map((r) => r.slot))].sort(),
      queues,
      binding_queues: bindingQueues,
      runs: runs
        .sort((a, b) => a.started_at - b.started_at || (a.id < b.id ? -1 : 1))
        .map((r) => ({
          id: r.id,
          slot: r.slot,
          pid: r.pid,
          age: ageSeconds(now, r.started_at),
          ...definedFields({ binding: r.binding }),
        })),
    };
    const waiting = waitingIds(this.store.state);
    if (waiting.length > 0) reply.waiting = waiting;
    // Runs that left their queue and whose raider has no pid yet (a few ms): without this
    // count, a mission being started is neither queued nor running for whoever polls.
    const live = new Set(runs.map((r) => r.id));
    let starting = 0;
    for (const id of this.store.state.runs.keys()) if (!live.has(id)) starting++;
    if (starting > 0) reply.starting = starting;
    const storageError = this.store.lastError();
    if (storageError !== null) reply.storage_error = storageError;
    for (const section of this.sections) Object.assign(reply, section());
    return reply;
  }

  /** The queues of this hall's durable state (a shared hall lists the cluster's with them). */
  waitingState(): Pick<HallStateStore['state'], 'slotQueues' | 'bindingQueues'> {
    return this.store.state;
  }

  queue(only?: string): ReplyTo<'queue'> {
    return { queues: waitingQueues(this.store.state, this.now(), only) };
  }

  sessions(): ReplyTo<'sessions'> {
    const sessions = [...this.store.state.sessions]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([binding, session]) => {
        const lastUsed = journalLastWritten(this.paths.root, session);
        return {
          binding,
          session,
          ...(lastUsed !== undefined ? { last_used: lastUsed, last_used_at: new Date(lastUsed).toISOString() } : {}),
        };
      });
    return { sessions };
  }

  attach(id: string): ReplyTo<'attach'> {
    const run = liveRun(this.registry, id);
    if (!run) return runNotFound();
    return {
      id: run.id,
      slot: run.slot,
      pid: run.pid,
      log_path: run.log_path,
      events_path: run.events_path,
      ...definedFields({ session: run.session, binding: run.binding }),
    };
  }

  /** Where an id that names no live run of this hall is: ended, waiting, dropped or unknown. */
  whereabouts(id: string): Promise<Whereabouts> {
    return whereabouts(this.paths, this.store.state, this.dropped, id);
  }

  /** The refusal of `verb` for an id that names no live run of this hall, saying what is true of it. */
  async refusal(id: string, verb: RefusedVerb): Promise<ErrorReply> {
    return refusal(id, await this.whereabouts(id), verb);
  }

  async logs(id: string): Promise<ReplyTo<'logs'>> {
    const live = liveRun(this.registry, id);
    return runLog(this.paths, id, live?.slot);
  }
}
