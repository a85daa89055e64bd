/**
 * What the hall knows of an id that names no live run, so that a refused
 * `cancel`, `kill`, `attach` or `logs` (and the dashboard's and MCP's
 * answers) say what is true: the run ended (with its status, and when), the
 * id is a waiting mission (and what works on it), the mission was dropped,
 * or the hall knows nothing of it.
 */
import fs from 'node:fs';
import { resultOf } from '../../domain/log-lines.js';
import { runOutcome } from '../../domain/outcome.js';
import { parseRunId } from '../../domain/run-id.js';
import type { BusEvent } from '../../protocol/events.js';
import { type ErrorReply, runNotFound } from '../../protocol/replies.js';
import { readDocumentOrNull } from '../storage/events-file.js';
import { eventsPath, type HallPaths } from '../../ports/hall-paths.js';
import { runLog } from '../storage/slot-logs.js';
import { waitingIds } from './waiting-missions.js';
import type { DurableState } from '../../ports/durable-state.js';
import type { RefusedVerb, Whereabouts } from '../../ports/hall-queries.js';

/** Dropped missions the hall remembers (since it started), so a later cancel of one says it was dropped. */
const DROPPED_KEPT = 5000;

export class DroppedMissions {
  private readonly byId = new Map<string, { reason: string; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes any bus event; remembers the missions of `raider.dropped` and `raider.refused` (missions that will not run). */
  noteEvent(event: BusEvent): void {
    if (event.type !== 'raider.dropped' && event.type !== 'raider.refused') return;
    this.byId.set(event.mission_id, { reason: event.reason, at: this.now() });
    if (this.byId.size > DROPPED_KEPT) this.byId.delete(this.byId.keys().next().value ?? '');
  }

  get(missionId: string): { reason: string; at: number } | undefined {
    return this.byId.get(missionId);
  }
}

/** Where `id` is, for an id that names no live run of this hall. */
export async function whereabouts(
  paths: HallPaths,
  state: Pick<DurableState, 'slotQueues' | 'bindingQueues'>,
  dropped: DroppedMissions,
  id: string,
): Promise<Whereabouts> {
  const waiting = waitingIds(state).find((w) => w.mission_id === id);
  if (waiting) return { kind: 'waiting', waiting };
  const gone = dropped.get(id);
  if (gone) return { kind: 'dropped', ...gone };
  return (await endOf(paths, id)) ?? { kind: 'unknown' };
}

/** How a run of this hall ended, from its events file (and when: the file's last write), else its slot log's result line. */
async function endOf(paths: HallPaths, id: string): Promise<Whereabouts | null> {
  if (parseRunId(id) === null) return null;
  const file = eventsPath(paths, id);
  const document = readDocumentOrNull(file);
  if (document !== null) {
    const { status } = runOutcome({ runId: id, document, exit: { code: 0, signal: null, signalNumber: null } });
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    return { kind: 'ended', status, ...(stat ? { at: stat.mtimeMs } : {}) };
  }
  const log = await runLog(paths, id, undefined);
  const result = 'log' in log ? resultOf(log.log, id) : null;
  return result !== null && result.status !== 'started' ? { kind: 'ended', status: result.status } : null;
}

/** The refusal of `verb` for an id where it is: in words, with the code a program decides on. */
export function refusal(id: string, where: Whereabouts, verb: RefusedVerb): ErrorReply {
  switch (where.kind) {
    case 'ended': {
      const when = where.at !== undefined ? ` at ${new Date(where.at).toISOString()}` : '';
      return { error: `run ${id} has ended (${where.status}${when}): there is nothing to ${verb}`, code: 'run_ended' };
    }
    case 'waiting': {
      const { waiting } = where;
      const queue = waiting.binding !== undefined ? `the queue of binding ${waiting.binding}` : `the queue of ${waiting.slot}`;
      return {
        error: `${id} is a mission waiting in ${queue} (position ${waiting.position}); it has no run to ${verb} yet: \`raider hall cancel ${id}\` drops it, \`raider hall queue --front ${id}\` moves it to the front`,
        code: 'mission_waiting',
      };
    }
    case 'dropped':
      return {
        error: `mission ${id} was dropped (${where.reason}) at ${new Date(where.at).toISOString()}; it has not run and will not`,
        code: 'mission_dropped',
      };
    case 'unknown':
      return runNotFound();
  }
}
