/**
 * How a run's end becomes `raider.done`: from the last `run.finished` of its
 * events file when there is one, else from how its process ended.
 */

/** The payload of a `run.finished` event without `type`, `seq` and `time`. */
export type RunDocument = Record<string, unknown>;

export interface ProcessExit {
  /** Exit code of a process that exited, null when a signal ended it. */
  code: number | null;
  /** Name of the signal that ended it (`SIGKILL`), else null. */
  signal: string | null;
  /** Number of that signal (9), for the error text. */
  signalNumber: number | null;
}

export interface RunOutcome {
  status: string;
  /** The exit code (0 when a signal ended the process), as in a wait status >> 8. */
  exit_code: number;
  signaled: 0 | 1;
  response?: unknown;
  error?: string;
  session?: string;
}

export interface OutcomeInput {
  runId: string;
  document: RunDocument | null;
  exit: ProcessExit;
  binding?: string;
  /** The session the hall started a bound run with. */
  session?: string;
}

/** Exit code of a raider whose session is held by another writer. */
export const EXIT_SESSION_IN_USE = 4;

export function runOutcome({ runId, document, exit, binding, session }: OutcomeInput): RunOutcome {
  const exitFields = { exit_code: exit.code ?? 0, signaled: exit.signal ? 1 : 0 } as const;
  const bound = binding !== undefined && session !== undefined;
  if (document) {
    const outcome: RunOutcome = {
      status: typeof document.status === 'string' && document.status !== '' ? document.status : 'failed',
      ...exitFields,
    };
    if (document.response !== undefined && document.response !== null) outcome.response = document.response;
    if (document.error !== undefined && document.error !== null) outcome.error = String(document.error);
    const docSession = sessionIdOf(document.session);
    if (bound) outcome.session = session;
    else if (docSession !== undefined) outcome.session = docSession;
    return outcome;
  }
  if (bound && !exit.signal && exit.code === EXIT_SESSION_IN_USE) {
    return {
      status: 'failed',
      ...exitFields,
      error: `session ${session} of ${binding} is in use by another run; mission not run`,
      session,
    };
  }
  const how = exit.signal
    ? `killed by signal ${exit.signalNumber ?? exit.signal}`
    : `exit code ${exit.code ?? 0}`;
  const outcome: RunOutcome = {
    status: 'failed',
    ...exitFields,
    error: `raider ${runId} ended without a result (${how})`,
  };
  if (bound) outcome.session = session;
  return outcome;
}

function sessionIdOf(value: unknown): string | undefined {
  if (value && typeof value === 'object' && 'id' in value) {
    const id = (value as { id: unknown }).id;
    if (typeof id === 'string' && id !== '') return id;
  }
  return undefined;
}

/**
 * The outcome of a run whose exit status is unknown: a run of a previous hall
 * that this hall watched to its end, or one found already gone at start-up.
 */
export function adoptedOutcome(input: Omit<OutcomeInput, 'exit'>): RunOutcome {
  if (input.document) return runOutcome({ ...input, exit: { code: 0, signal: null, signalNumber: null } });
  const outcome: RunOutcome = {
    status: 'failed',
    exit_code: 0,
    signaled: 0,
    error: 'the hall stopped while this run was going',
  };
  if (input.binding !== undefined && input.session !== undefined) outcome.session = input.session;
  return outcome;
}

/** The outcome of a run whose process could not be started at all. */
export function unstartedOutcome(runId: string, reason: string): RunOutcome {
  return { status: 'failed', exit_code: 0, signaled: 0, error: `raider ${runId} could not be started: ${reason}` };
}
