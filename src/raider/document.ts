/**
 * The run document: the `--json` output and the
 * payload of the last stream event, `run.finished`. Which fields a status
 * carries is fixed by the contract: only a completed run has `response`
 * and `metrics`, only a failed one `error`, only an interrupted one `signal`.
 */
import type { SignalName } from './signals.js';
import type { TurnTokens } from './engines/engine.js';

export type RunStatus = 'completed' | 'failed' | 'cancelled' | 'interrupted';

export interface RunMetrics {
  raids: number;
  /** Engine turns (model calls). */
  iterations: number;
  tool_calls: number;
  time_ms: number;
}

export interface SessionInfo {
  id: string;
  /** Absolute path of the journal. */
  path: string;
}

export interface RunDocument {
  version: 1;
  status: RunStatus;
  response?: string;
  error?: string;
  signal?: SignalName;
  metrics?: RunMetrics;
  /** Seconds, rounded to milliseconds. */
  elapsed: number;
  session?: SessionInfo;
  /** The tokens of the run's model calls, summed, when the model's API said them (any status). */
  usage?: TurnTokens;
}

export type RunEnd =
  | { status: 'completed'; response: string; metrics: RunMetrics }
  | { status: 'failed'; error: string }
  | { status: 'cancelled' }
  | { status: 'interrupted'; signal: SignalName };

export function runDocument(end: RunEnd, elapsedMs: number, session: SessionInfo | undefined, usage?: TurnTokens): RunDocument {
  const doc: RunDocument = { version: 1, status: end.status, elapsed: Math.round(elapsedMs) / 1000 };
  if (end.status === 'completed') {
    doc.response = end.response;
    doc.metrics = end.metrics;
  } else if (end.status === 'failed') {
    doc.error = end.error;
  } else if (end.status === 'interrupted') {
    doc.signal = end.signal;
  }
  if (session) doc.session = session;
  if (usage !== undefined && Object.keys(usage).length > 0) doc.usage = usage;
  return doc;
}
