/**
 * Reaping a run whose process has exited: its outcome from the last
 * `run.finished` of its events file (or from how it ended), and the result
 * line in the slot log before anybody hears of it.
 */
import { fromPromise } from 'xstate';
import { readDocumentOrNull, releaseEventsFile } from '../adapters/storage/events-file.js';
import { appendToLogSync } from '../adapters/storage/slot-logs.js';
import { resultLine, resultText } from '../domain/log-lines.js';
import { adoptedOutcome, runOutcome, type RunOutcome } from '../domain/outcome.js';
import type { ReapInput } from '../machines/run.machine.js';

export const reapRunLogic = fromPromise<RunOutcome, ReapInput>(async ({ input }) => {
  const document = readDocumentOrNull(input.eventsPath);
  releaseEventsFile(input.eventsPath);
  const bound = input.binding !== undefined && input.session !== undefined ? { binding: input.binding, session: input.session } : {};
  const outcome =
    input.exit === null
      ? adoptedOutcome({ runId: input.runId, document, ...bound })
      : runOutcome({ runId: input.runId, document, exit: input.exit, ...bound, stop: input.stop });
  appendToLogSync(input.logPath, resultLine(input.runId, outcome.status, resultText(outcome)));
  return outcome;
});
