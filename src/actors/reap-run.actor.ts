/**
 * Reaping a run whose process has exited: its outcome from the last
 * `run.finished` of its events file (or from how it ended), and the result
 * line in the slot log before anybody hears of it. A run in a git worktree
 * of its own has it settled first (src/adapters/os/git-worktree.ts).
 */
import { fromPromise } from 'xstate';
import { openedAgentSession, readDocumentOrNull, releaseEventsFile } from '../adapters/storage/events-file.js';
import { appendToLogSync } from '../adapters/storage/slot-logs.js';
import { reportRunWorktree, settleRunWorktree } from '../adapters/os/git-worktree.js';
import { errorMessage } from '../domain/error-message.js';
import { resultLine, resultText } from '../domain/log-lines.js';
import { adoptedOutcome, type RunDocument, runOutcome, type RunOutcome } from '../domain/outcome.js';
import type { RunWorktree } from '../domain/worktree.js';
import type { ReapInput, SettleInput } from '../machines/run.machine.js';

export const reapRunLogic = fromPromise<RunOutcome, ReapInput>(async ({ input }) => {
  const document = readDocumentOrNull(input.eventsPath);
  releaseEventsFile(input.eventsPath);
  const bound = input.binding !== undefined && input.session !== undefined ? { binding: input.binding, session: input.session } : {};
  const reported =
    input.exit === null
      ? adoptedOutcome({ runId: input.runId, document, ...bound })
      : runOutcome({ runId: input.runId, document, exit: input.exit, ...bound, stop: input.stop });
  const ended = withOpenedAgentSession(reported, input.eventsPath, { document, session: input.session });
  const outcome = input.worktree === undefined ? ended : await withWorktree(ended, input.worktree);
  appendToLogSync(input.logPath, resultLine(input.runId, outcome.status, resultText(outcome)));
  return outcome;
});

/** A bound run whose bridge wrote no run document: the agent session its events say it opened, for the binding's next run. */
export function withOpenedAgentSession(
  outcome: RunOutcome,
  eventsPath: string,
  run: { document: RunDocument | null; session: string | undefined },
): RunOutcome {
  if (run.document !== null || run.session === undefined) return outcome;
  const opened = openedAgentSession(eventsPath);
  return opened === null ? outcome : { ...outcome, agent_session: opened };
}

/** A run that ended without a reap (its raider never started): its worktree settled all the same. */
export const settleWorktreeLogic = fromPromise<RunOutcome, SettleInput>(({ input }) =>
  input.worktree === undefined ? Promise.resolve(input.outcome) : withWorktree(input.outcome, input.worktree),
);

/** The run's worktree settled; when git fails, the worktree stays as it is and the run's error says why. */
export async function withWorktree(outcome: RunOutcome, worktree: RunWorktree): Promise<RunOutcome> {
  try {
    // A binding's worktree stays for its next run: what this run did is only reported.
    const result = worktree.binding !== undefined ? await reportRunWorktree(worktree) : await settleRunWorktree(worktree);
    return { ...outcome, worktree: result };
  } catch (err) {
    const error = `its worktree ${worktree.path} (branch ${worktree.branch}) was left as it is: ${errorMessage(err)}`;
    return { ...outcome, error: outcome.error === undefined ? error : `${outcome.error}; ${error}` };
  }
}
