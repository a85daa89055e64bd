/**
 * How the hall waits after a failed Bot API call. Polling never gives up but
 * never spins: Telegram's `retry_after` wins (429, and some 409/5xx), a
 * token Telegram does not know (401/404) waits long, as a person has to fix
 * the config, and everything else backs off exponentially. A send is retried
 * a few times, for what may pass (rate limits, server errors, a connection).
 */

export interface ApiFailure {
  /** HTTP status or Bot API error_code; absent for transport failures. */
  status?: number;
  /** Seconds Telegram asks us to wait. */
  retryAfterS?: number;
  description: string;
}

export interface PollBackoff {
  /** First wait after a failure; doubles with each failure in a row. */
  baseMs: number;
  maxMs: number;
  /** The wait after a rejected token. */
  badTokenMs: number;
}

export const DEFAULT_POLL_BACKOFF: PollBackoff = { baseMs: 1000, maxMs: 60_000, badTokenMs: 60_000 };

/** A token Telegram does not accept: 401 Unauthorized, or 404 for one it cannot even parse. */
export function isBadToken(failure: ApiFailure): boolean {
  return failure.status === 401 || failure.status === 404;
}

/** The wait before the next getUpdates after `failuresInRow` failures (1 for the first). */
export function pollRetryDelay(failure: ApiFailure, failuresInRow: number, policy: PollBackoff): number {
  if (failure.retryAfterS !== undefined && failure.retryAfterS >= 0) return failure.retryAfterS * 1000;
  if (isBadToken(failure)) return policy.badTokenMs;
  const exp = policy.baseMs * 2 ** Math.min(Math.max(failuresInRow - 1, 0), 20);
  return Math.min(exp, policy.maxMs);
}

export interface SendPolicy {
  maxAttempts: number;
  /** A longer `retry_after` fails the send rather than holding the caller (unless `waitOutRetryAfter`). */
  maxWaitMs: number;
  baseMs: number;
  /**
   * Every `retry_after` is waited out, however long: for a message whose
   * sender ends the wait itself once the message is no longer wanted.
   */
  waitOutRetryAfter?: boolean;
}

export const DEFAULT_SEND_POLICY: SendPolicy = { maxAttempts: 5, maxWaitMs: 60_000, baseMs: 500 };

export type SendStep =
  | { kind: 'retry'; delayMs: number }
  /** Markdown Telegram could not parse: send the same text as plain text. */
  | { kind: 'plain' }
  /** The topic is gone: send into the chat itself. */
  | { kind: 'withoutThread' }
  | { kind: 'fail' };

export function sendRetry(
  failure: ApiFailure,
  attempt: number,
  policy: SendPolicy,
  sent: { markdown: boolean; thread: boolean },
): SendStep {
  const text = failure.description.toLowerCase();
  if (failure.status === 400 && sent.markdown && text.includes("can't parse entities")) return { kind: 'plain' };
  if (failure.status === 400 && sent.thread && text.includes('thread not found')) return { kind: 'withoutThread' };
  if (attempt >= policy.maxAttempts) return { kind: 'fail' };
  if (failure.retryAfterS !== undefined) {
    const delayMs = failure.retryAfterS * 1000;
    return delayMs <= policy.maxWaitMs || policy.waitOutRetryAfter === true ? { kind: 'retry', delayMs } : { kind: 'fail' };
  }
  // Transport failures and server errors may pass; other 4xx will not.
  if (failure.status === undefined || failure.status >= 500) {
    return { kind: 'retry', delayMs: Math.min(policy.baseMs * 2 ** (attempt - 1), policy.maxWaitMs) };
  }
  return { kind: 'fail' };
}
