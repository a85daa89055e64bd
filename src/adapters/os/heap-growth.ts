/**
 * How far V8 lets a hall's heap grow between full collections.
 *
 * A hall's live heap is small (about 45 MB with 100,000 missions waiting),
 * but a burst of spawns makes a lot of short-lived garbage, and V8's own
 * growing factor (up to 4x the live heap when collections are cheap) let a
 * 100,000-mission pipelined burst end with 290-320 MiB resident, kept long
 * after the burst. A fixed factor of 2x ends the same burst at 195-211 MiB,
 * for some 13% of a pipelined burst's rate (bench/RESULTS.md). It is one of
 * the few V8 flags that still take effect once the process runs.
 *
 * RAIDER_HALL_HEAP_GROWING_PERCENT overrides it (0: V8's own factor).
 */
import v8 from 'node:v8';

export const DEFAULT_HEAP_GROWING_PERCENT = 100;
const ENV = 'RAIDER_HALL_HEAP_GROWING_PERCENT';

/** The percent to use, or an error naming the variable when it is not a whole number from 0 to 1000. */
export function heapGrowingPercent(env: NodeJS.ProcessEnv = process.env): number | Error {
  const raw = env[ENV];
  if (raw === undefined || raw === '') return DEFAULT_HEAP_GROWING_PERCENT;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 1000)
    return new Error(`${ENV} must be a whole number from 0 to 1000 (0: V8's own), not ${JSON.stringify(raw)}`);
  return value;
}

/** Sets the factor for this process (the hall's own); a bad variable is reported through `warn` and V8's own factor stays. */
export function limitHeapGrowth(warn: (message: string) => void, env: NodeJS.ProcessEnv = process.env): void {
  const percent = heapGrowingPercent(env);
  if (percent instanceof Error) {
    warn(percent.message);
    return;
  }
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
