/**
 * How long a warm bridge that failed to start waits to be replaced
 * (docs/agents.md, "Warm bridges"): longer with each failed start in a row.
 * Which ends are failed starts is src/machines/warm-spare.machine.ts's to say.
 */

/** Waits before the next start after failed ones: longer each time, then the last. */
export const RETRY_MS: readonly number[] = [1000, 2000, 5000, 15_000, 60_000];

/** A ready bridge that ends by itself sooner than this after it got ready counts as a failed start. */
export const EARLY_END_MS = 10_000;

/** The wait before the next start after `failedInRow` failed ones before this one. */
export function retryWaitMs(failedInRow: number): number {
  return RETRY_MS[Math.min(failedInRow, RETRY_MS.length - 1)] ?? 0;
}
