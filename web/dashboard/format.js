// Times as the page shows them: local time, 24-hour, from the Date's own
// fields. Not `toLocaleTimeString()` nor an `Intl.DateTimeFormat`: the first
// one a fresh page makes loads the locale's data, 60-150 ms of a first load
// on a busy machine, for a Runs table that shows 50 start times.

const two = (n) => String(n).padStart(2, '0');

/** The time of day of `at` (epoch ms, or a Date): `14:05:09`. */
export function clockTime(at) {
  const d = new Date(at);
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** The date and time of `at` (epoch ms, an ISO 8601 string, or a Date): `2026-12-02 14:05:09`. */
export function dateTime(at) {
  const d = new Date(at);
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${clockTime(d)}`;
}

/**
 * The time of day to the millisecond, for a run's own page: `14:05:09.123`;
 * a time on a whole second is one known only to the second (the run id's), and shown so.
 */
export function preciseTime(at) {
  const ms = new Date(at).getMilliseconds();
  return ms === 0 ? clockTime(at) : `${clockTime(at)}.${String(ms).padStart(3, '0')}`;
}
