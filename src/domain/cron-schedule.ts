/**
 * When a cron job's occurrences fall: cron-parser 5 does the calendar work
 * (5- or 6-field expressions, `@daily`-style aliases, an optional IANA time
 * zone; without one, the hall's local time). Pure: no clock is read here,
 * every answer is relative to a time the caller passes.
 *
 * An occurrence is always what `next()` yields from the previous one. Around
 * a DST fall-back, cron-parser's `prev()` also returns the repeated hour's
 * slots that `next()` skips (tested: `30 2 * * *` gives 02:30 CET after
 * 02:30 CEST), so `prev()` is only used to get close to a time, never to
 * name a slot.
 */
import { CronExpressionParser } from 'cron-parser';
import { errorMessage } from './error-message.js';
import { definedFields } from './defined-fields.js';

export interface CronSpec {
  /** The expression as configured. */
  cron: string;
  /** IANA time zone; none = the hall's local time. */
  tz?: string;
}

function expression(spec: CronSpec, fromMs: number) {
  return CronExpressionParser.parse(spec.cron, {
    currentDate: new Date(fromMs),
    ...definedFields({ tz: spec.tz }),
  });
}

const FIELDS = ['minute', 'hour', 'day of month', 'month', 'day of week'];
const ALIASES = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@hourly', '@minutely', '@secondly', '@weekdays', '@weekends'];
const VALID_EXAMPLE =
  'a valid schedule is 5 fields such as "0 9 * * 1-5" (09:00 on weekdays), 6 with seconds first, or an alias such as @daily';

/** cron-parser's complaint about one field, in our words. */
function fieldComplaint(message: string): string {
  const range = /got value (\S+) expected range (\d+-\d+)/.exec(message);
  if (range) return `${range[1]} is outside ${range[2]}`;
  if (/cannot resolve alias/.test(message)) return 'not a number, range, step or name';
  return message;
}

/**
 * Why the expression cannot be scheduled, or null when it can: what is
 * wrong (which field, or the count of fields) and what a valid one looks like.
 */
export function cronProblem(spec: CronSpec): string | null {
  const text = spec.cron.trim();
  // cron-parser reads an empty expression as `* * * * *`; nobody means that.
  if (text === '') return `the expression is empty; ${VALID_EXAMPLE}`;
  if (text.startsWith('@')) {
    if (!ALIASES.includes(spec.cron)) return `${JSON.stringify(text)} is not an alias (${ALIASES.join(', ')}); ${VALID_EXAMPLE}`;
  } else {
    // cron-parser fills in fields missing on the left, so "every day" would read as two fields of a schedule.
    const fields = text.split(/\s+/);
    if (fields.length !== 5 && fields.length !== 6) {
      return `${fields.length} field${fields.length === 1 ? '' : 's'} where a schedule has 5 (${FIELDS.join(', ')}) or 6 (seconds first); ${VALID_EXAMPLE}`;
    }
    const names = fields.length === 6 ? ['second', ...FIELDS] : FIELDS;
    for (const [i, field] of fields.entries()) {
      try {
        expression({ cron: fields.map((f, j) => (j === i ? f : '*')).join(' ') }, Date.UTC(2000, 0, 1));
      } catch (err) {
        return `the ${names[i]} field ${JSON.stringify(field)}: ${fieldComplaint(errorMessage(err))}; ${VALID_EXAMPLE}`;
      }
    }
  }
  try {
    expression(spec, Date.UTC(2000, 0, 1)).next();
    return null;
  } catch (err) {
    return `no time matches it (${errorMessage(err)}); ${VALID_EXAMPLE}`;
  }
}

/** The first occurrence strictly after `afterMs`, or null when there is none. */
export function nextSlot(spec: CronSpec, afterMs: number): number | null {
  try {
    return expression(spec, afterMs).next().getTime();
  } catch {
    return null;
  }
}

/** The occurrence `steps` occurrences before `beforeMs` by `prev()`, or null. */
function stepsBack(spec: CronSpec, beforeMs: number, steps: number): number | null {
  try {
    const it = expression(spec, beforeMs);
    let at: number | null = null;
    for (let i = 0; i < steps; i++) at = it.prev().getTime();
    return at;
  } catch {
    return null;
  }
}

/**
 * The latest occurrence in (afterMs, nowMs], or null when none is due.
 *
 * Walking `next()` from `afterMs` would cost one step per missed slot (a
 * per-second job after a week's outage is 600 000 steps), so the walk starts
 * a few `prev()` steps before now instead, which is close enough to meet the
 * `next()` sequence whatever DST did in between.
 */
export function latestSlot(spec: CronSpec, afterMs: number, nowMs: number): number | null {
  const first = nextSlot(spec, afterMs);
  if (first === null || first > nowMs) return null;
  const near = stepsBack(spec, nowMs + 1, 3);
  let cursor = near !== null && near - 1 > afterMs ? near - 1 : afterMs;
  let latest: number | null = null;
  for (;;) {
    const at = nextSlot(spec, cursor);
    if (at === null || at > nowMs) break;
    latest = at;
    cursor = at;
  }
  return latest ?? first;
}
