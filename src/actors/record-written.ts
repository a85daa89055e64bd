/**
 * The last step before a raider starts: wait until the state store holds the
 * run's record and has written it. The hall applies the record as a store
 * operation when the run reports it (`run.prepared`), in the step before the
 * run's process actor starts; the check is of this run's own record all the
 * same, so no order of steps can start a raider whose run is not recorded.
 * From then a crash of the hall cannot run the mission again nor forget the
 * run. (Replies wait for the fdatasync; the start need not.) When the record
 * cannot be written (a full disk, a database that does not answer), the run
 * waits until it can: the mission is not lost, and a crash meanwhile finds it
 * still waiting in its queue.
 *
 * The raider process actor asks this before it asks for the raider's start
 * (raider-process.actor.ts): the record is almost always written at once,
 * and then the spawn request leaves in the same step, with no promise, no
 * actor and no machine step of its own between the record and the request.
 */
import { appendToLogSync } from '../adapters/storage/slot-logs.js';
import type { HallStateStore } from '../ports/state-store.js';
import { errorMessage } from '../domain/error-message.js';
import { resultLine } from '../domain/log-lines.js';

/** How often a store that could not write is asked again. */
const WRITE_RETRY_MS = 250;

type RecordStore = Pick<HallStateStore, 'written' | 'commit' | 'lastError' | 'refusal'> & {
  readonly state: { readonly runs: { has(runId: string): boolean } };
};

/** The run whose record is waited for, and its slot log (closed with a result line if it cannot start). */
export interface RecordedRun {
  runId: string;
  logPath: string;
}

/**
 * A record being waited for: `done` resolves once it is written, or rejects
 * with why the run cannot start; `stop` (the run is stopped meanwhile) ends a
 * wait still under way with the store's reason, and does nothing after.
 */
export interface RecordWait {
  done: Promise<void>;
  stop(): void;
}

/** Null when the run's record is written and the raider may start now; else the wait for it. */
export type RecordWritten = (run: RecordedRun) => RecordWait | null;

export function recordWritten(store: RecordStore): RecordWritten {
  const check = (run: RecordedRun): boolean => {
    if (!store.state.runs.has(run.runId) || !store.written()) return false;
    // A shared cluster refuses the record of a run whose mission's claim went to another hall.
    const refused = store.refusal?.(run.runId) ?? null;
    if (refused !== null) throw new Error(refused);
    return true;
  };
  const failed = (run: RecordedRun, err: unknown): Error => {
    // prepareRun wrote the run's start line: close its section of the log.
    appendToLogSync(run.logPath, resultLine(run.runId, 'failed', `could not be started: ${errorMessage(err)}`));
    return err instanceof Error ? err : new Error(errorMessage(err));
  };
  return (run) => {
    try {
      if (check(run)) return null;
    } catch (err) {
      return { done: Promise.reject(failed(run, err)), stop: () => {} };
    }
    const wait = untilWritten(store, () => check(run));
    const done = wait.done.catch((err: unknown) => {
      throw failed(run, err);
    });
    return { done, stop: wait.stop };
  };
}

/** Until `recorded` says yes (or throws: the run cannot start), or the wait is stopped. */
function untilWritten(store: RecordStore, recorded: () => boolean): RecordWait {
  let stop = () => {};
  const done = new Promise<void>((resolve, reject) => {
    /** Polls while the record is not written; null once the wait is over. */
    let timer: NodeJS.Timeout | null = null;
    const end = (): boolean => {
      if (timer === null) return false;
      clearInterval(timer);
      timer = null;
      return true;
    };
    const check = () => {
      if (timer === null) return;
      let ok: boolean;
      try {
        ok = recorded();
      } catch (err) {
        end();
        reject(err);
        return;
      }
      if (ok && end()) resolve();
    };
    // The run stopped before its record was written; once written, its stop is none of this.
    stop = () => {
      if (end()) reject(new Error(store.lastError() ?? 'the run could not be recorded'));
    };
    timer = setInterval(check, WRITE_RETRY_MS);
    // A store that writes only by committing (PostgreSQL) is written when its commit is: no poll to wait for.
    store.commit().then(check, () => undefined);
  });
  return { done, stop };
}
