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
 *
 * The young generation does not grow either: V8 doubles it (up to 16 MiB
 * of semi-spaces) whenever much survives a scavenge, as in the first runs of
 * any hall, and never gives it back: an idle hall's heap was ~33 MiB for
 * ~16 MiB live (bench/RESULTS.md). Kept at its start size, as
 * `--max-semi-space-size=1` on the command line would (which a hall started
 * from a terminal cannot be given), the heap is ~20 MiB and the hall's
 * private memory ~5.5 MiB less. bin/raider sets it before any module loads
 * (the loading grows it); this sets it again, or as the variable says.
 * RAIDER_HALL_SEMI_SPACE_GROWTH overrides its growth factor (0: V8's own).
 */
import v8 from 'node:v8';

export const DEFAULT_HEAP_GROWING_PERCENT = 100;
const ENV = 'RAIDER_HALL_HEAP_GROWING_PERCENT';
export const DEFAULT_SEMI_SPACE_GROWTH = 1;
const SEMI_SPACE_ENV = 'RAIDER_HALL_SEMI_SPACE_GROWTH';

/** A whole number from 0 to `max` from `name`, its default when unset, or an error naming the variable. */
function wholeFromEnv(env: NodeJS.ProcessEnv, name: string, max: number, fallback: number): number | Error {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > max)
    return new Error(`${name} must be a whole number from 0 to ${max} (0: V8's own), not ${JSON.stringify(raw)}`);
  return value;
}

/** The percent to use, or an error naming the variable when it is not a whole number from 0 to 1000. */
export function heapGrowingPercent(env: NodeJS.ProcessEnv = process.env): number | Error {
  return wholeFromEnv(env, ENV, 1000, DEFAULT_HEAP_GROWING_PERCENT);
}

/** The young generation's growth factor to use, or an error naming the variable when it is not a whole number from 0 to 16. */
export function semiSpaceGrowth(env: NodeJS.ProcessEnv = process.env): number | Error {
  return wholeFromEnv(env, SEMI_SPACE_ENV, 16, DEFAULT_SEMI_SPACE_GROWTH);
}

/** Sets both factors for this process (the hall's own); a bad variable is reported through `warn` and V8's own factor stays. */
export function limitHeapGrowth(warn: (message: string) => void, env: NodeJS.ProcessEnv = process.env): void {
  for (const [value, flag] of [
    [heapGrowingPercent(env), '--heap-growing-percent'],
    [semiSpaceGrowth(env), '--semi-space-growth-factor'],
  ] as const) {
    if (value instanceof Error) warn(value.message);
    else if (value > 0) v8.setFlagsFromString(`${flag}=${value}`);
  }
}
