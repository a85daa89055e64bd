/**
 * The last step before a raider starts: wait until the state store has
 * written the run's record, which the hall applied as a store operation just
 * before it told the run to go on. From then a crash of the hall cannot run
 * the mission again nor forget the run. (Replies wait for the fdatasync; the
 * start need not.) When the record cannot be written (a full disk, a database
 * that does not answer), the run waits until it can: the mission is not
 * lost, and a crash meanwhile finds it still waiting in its queue.
 */
import { fromPromise } from 'xstate';
import { appendToLogSync } from '../adapters/storage/slot-logs.js';
import type { HallStateStore } from '../adapters/storage/state-store.js';
import { errorMessage } from '../domain/error-message.js';
import { resultLine } from '../domain/log-lines.js';
import type { RecordInput } from '../machines/run.machine.js';

/** How often a store that could not write is asked again. */
const WRITE_RETRY_MS = 250;

type RecordStore = Pick<HallStateStore, 'written' | 'commit' | 'lastError' | 'refusal'>;

export function recordWrittenLogic(store: RecordStore) {
  return fromPromise<void, RecordInput>(async ({ input, signal }) => {
    try {
      if (!store.written()) await untilWritten(store, signal);
      // A shared cluster refuses the record of a run whose mission's claim went to another hall.
      const refused = store.refusal?.(input.runId) ?? null;
      if (refused !== null) throw new Error(refused);
    } catch (err) {
      // prepareRun wrote the run's start line: close its section of the log.
      appendToLogSync(input.logPath, resultLine(input.runId, 'failed', `could not be started: ${errorMessage(err)}`));
      throw err;
    }
  });
}

function untilWritten(store: RecordStore, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!store.written()) return;
      clearInterval(timer);
      resolve();
    };
    const timer = setInterval(check, WRITE_RETRY_MS);
    // A store that writes only by committing (PostgreSQL) is written when its commit is: no poll to wait for.
    store.commit().then(check, () => undefined);
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(timer);
        reject(new Error(store.lastError() ?? 'the run could not be recorded'));
      },
      { once: true },
    );
  });
}
