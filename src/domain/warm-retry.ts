/**
 * When a warm bridge that ended is replaced (docs/agents.md, "Warm bridges"):
 * at once, or after a wait that grows with the failed starts in a row. A
 * start failed when the bridge never got ready, or ended by itself soon after
 * it did (something on the machine kills the bridges: starting each again at
 * once would be a restart loop). One that was taken, or lived long, was fine.
 */

/** Waits before the next start after failed ones: longer each time, then the last. */
export const RETRY_MS: readonly number[] = [1000, 2000, 5000, 15_000, 60_000];

/** A ready bridge that ends by itself sooner than this after it got ready counts as a failed start. */
export const EARLY_END_MS = 10_000;

export interface SpareEnd {
  /** Where it was when it ended by itself: still starting, ready and unused, or taken by a run. */
  state: 'starting' | 'ready' | 'taken';
  /** When it got ready (ms), for a ready one. */
  readyAt?: number;
  endedAt: number;
}

export type SpareVerdict = { kind: 'replace' } | { kind: 'retry'; early: boolean };

export function spareEndVerdict(end: SpareEnd): SpareVerdict {
  if (end.state === 'starting') return { kind: 'retry', early: false };
  if (end.state === 'ready' && end.endedAt - (end.readyAt ?? 0) < EARLY_END_MS) return { kind: 'retry', early: true };
  return { kind: 'replace' };
}

/** The wait before the next start after `failedInRow` failed ones before this one. */
export function retryWaitMs(failedInRow: number): number {
  return RETRY_MS[Math.min(failedInRow, RETRY_MS.length - 1)] ?? 0;
}
