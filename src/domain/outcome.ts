/**
 * How a run's end becomes `raider.done`: from the last `run.finished` of its
 * events file when there is one, else from how its process ended.
 */

import { isRecord } from './records.js';
import { type RunUsage, runUsageOf } from './run-usage.js';
import type { WorktreeResult } from './worktree.js';

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
  /** Why a bound run's raider could not continue its binding's session and started a new one (the ACP bridge's `session_error`). */
  session_error?: string;
  /**
   * Set when the hall had to escalate to stop the run (the raider did not end
   * on the first signal): who asked and which signals were sent, e.g.
   * "cancelled by the hall, escalated to SIGKILL (SIGINT, SIGTERM, SIGKILL)".
   * `status` stays what the raider's result says (`cancelled` for a raider
   * the cancel's SIGINT ended before it wrote one: stoppedByCancel); this says why.
   */
  hall_stop?: string;
  /** What the run's own git worktree left (docs/worktrees.md). */
  worktree?: WorktreeResult;
  /** Tokens, context and cost the raider reported in its run document. */
  usage?: RunUsage;
  /** A bound run of an ACP agent: the agent session its prompt went to, and the agent command (the hall records it with the binding). */
  agent_session?: { id: string; agent: string };
}

/** The signals the hall sent a run, in order, and whether a cancel started them. */
export interface HallStop {
  cancelRequested: boolean;
  signals: readonly string[];
}

export interface OutcomeInput {
  runId: string;
  document: RunDocument | null;
  exit: ProcessExit;
  binding?: string;
  /** The session the hall started a bound run with. */
  session?: string;
  stop?: HallStop;
}

/** Exit code of a raider whose session is held by another writer. */
export const EXIT_SESSION_IN_USE = 4;

/** What the hall did to stop a run that did not end on its first signal, or undefined when it did not escalate. */
export function hallStopText(stop: HallStop | undefined, exit: ProcessExit): string | undefined {
  if (stop === undefined || exit.signal === null || stop.signals.length < 2) return undefined;
  const last = stop.signals[stop.signals.length - 1];
  return `${stop.cancelRequested ? 'cancelled' : 'stopped'} by the hall, escalated to ${last} (${stop.signals.join(', ')})`;
}

export function runOutcome(input: OutcomeInput): RunOutcome {
  const outcome = documentedOrExitOutcome(input);
  const hallStop = hallStopText(input.stop, input.exit);
  return hallStop === undefined ? outcome : { ...outcome, hall_stop: hallStop };
}

/**
 * A run with no result that the cancel's own SIGINT ended: a raider cancelled
 * while it is still starting, before it handles SIGINT (a warm bridge not yet
 * handed its run, a raider still loading), dies by the default action and
 * writes nothing; it was cancelled, as a raider that dies by SIGINT after a
 * result says. One the escalation had to end (SIGTERM, SIGKILL) stays failed,
 * with `hall_stop` saying why (README, "Cancel escalation").
 */
function stoppedByCancel(exit: ProcessExit, stop: HallStop | undefined): boolean {
  return stop?.cancelRequested === true && exit.signal === 'SIGINT' && stop.signals.includes('SIGINT');
}

function documentedOrExitOutcome({ runId, document, exit, binding, session, stop }: OutcomeInput): RunOutcome {
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
    if (bound && typeof document.session_error === 'string' && document.session_error !== '')
      outcome.session_error = document.session_error;
    const usage = runUsageOf(document.usage);
    if (usage !== undefined) outcome.usage = usage;
    const agentSession = agentSessionIn(document.agent_session);
    if (bound && agentSession !== undefined) outcome.agent_session = agentSession;
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
  const how = exit.signal ? `killed by signal ${exit.signalNumber ?? exit.signal}` : `exit code ${exit.code ?? 0}`;
  const outcome: RunOutcome = {
    status: stoppedByCancel(exit, stop) ? 'cancelled' : 'failed',
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

/** Why a run ended so, for a person, when its own text says nothing: never an empty reason after `STATUS:`. */
const SILENT_END: Readonly<Record<string, string>> = {
  completed: '(an empty answer)',
  cancelled: 'cancelled on request',
  interrupted: 'interrupted by a signal',
  failed: 'failed without saying why',
};

/** The text after `STATUS:` in a slot log line and in the CLI: the answer, or why the run ended. */
export function outcomeText(outcome: { status: string; response?: unknown; error?: string; hall_stop?: string }): unknown {
  const own = outcome.status === 'completed' ? outcome.response : outcome.error;
  const empty = own === undefined || own === null || (typeof own === 'string' && own.trim() === '');
  if (outcome.hall_stop !== undefined) return empty ? outcome.hall_stop : `${outcome.hall_stop}: ${String(own)}`;
  return empty ? (SILENT_END[outcome.status] ?? `ended ${outcome.status}`) : own;
}

function agentSessionIn(value: unknown): { id: string; agent: string } | undefined {
  if (!isRecord(value)) return undefined;
  const { id, agent } = value;
  return typeof id === 'string' && id !== '' && typeof agent === 'string' ? { id, agent } : undefined;
}
