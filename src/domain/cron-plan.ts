/**
 * What a cron job does when it wakes: sleep on, fire an occurrence, or
 * record a missed one as skipped; and whether a due occurrence starts a run
 * or is coalesced. Pure decisions; the cron job machine acts on them.
 */
import { latestSlot, nextSlot, type CronSpec } from './cron-schedule.js';

/** What to do about occurrences missed while the hall was down (or asleep). */
export type CatchUp = 'once' | 'skip';

export type WakePlan =
  /** Nothing is due before `until`. */
  | { kind: 'sleep'; until: number }
  /** Hand the occurrence at `slot` to the hall; `late` when it is a catch-up of a missed one. */
  | { kind: 'fire'; slot: number; late: boolean }
  /** The occurrence at `slot` (and any before it) was missed and is not run (`catch_up: skip`). */
  | { kind: 'skip'; slot: number }
  /** The expression has no occurrence left. */
  | { kind: 'done' };

export interface WakeInput {
  spec: CronSpec;
  /** The last occurrence handled, or when the job was first armed if none was. */
  after: number;
  now: number;
  /**
   * How late an occurrence may be and still count as on time. A running hall
   * uses a minute (timers fire late under load); at start-up it is 0, since
   * anything already past was missed while the hall was down.
   */
  graceMs: number;
  catchUp: CatchUp;
}

/** The running hall's tolerance for a late timer. */
export const ON_TIME_GRACE_MS = 60_000;

export function planWake({ spec, after, now, graceMs, catchUp }: WakeInput): WakePlan {
  const first = nextSlot(spec, after);
  if (first === null) return { kind: 'done' };
  if (first > now) return { kind: 'sleep', until: first };
  // Several due slots fold into the latest: a job never runs a backlog. A
  // slot must lie after `after`, or the job would handle it again and again.
  const latest = latestSlot(spec, after, now);
  const slot = latest !== null && latest > after && latest <= now ? latest : first;
  if (now - slot <= graceMs) return { kind: 'fire', slot, late: false };
  return catchUp === 'once' ? { kind: 'fire', slot, late: true } : { kind: 'skip', slot };
}

/**
 * With `coalesce`, an occurrence whose previous one has not ended (its run
 * still going, or its mission still waiting) starts nothing; without it, the
 * occurrence is handed over and waits in the job's binding queue.
 */
export function occurrenceAction(coalesce: boolean, previousInFlight: boolean): 'fire' | 'coalesce' {
  return coalesce && previousInFlight ? 'coalesce' : 'fire';
}

/** True when a mission of `binding` is still running or waiting. */
export function bindingInFlight(binding: string, missions: Iterable<{ binding?: string }>): boolean {
  for (const mission of missions) if (mission.binding === binding) return true;
  return false;
}

/** The longest timer Node keeps exact (2^31 - 1 ms is about 24.8 days); longer waits are chunked. */
export const MAX_TIMER_MS = 24 * 24 * 3600 * 1000;

/** How long to sleep before looking at the clock again. */
export function sleepMs(until: number, now: number, maxSleepMs: number): number {
  return Math.max(0, Math.min(until - now, maxSleepMs, MAX_TIMER_MS));
}
