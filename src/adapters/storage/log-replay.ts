/**
 * Reading the write-ahead log back: each line parsed and checked against the
 * operation schema. A line that does not parse is reported with the log's
 * file name and its line number and skipped, except a torn last line, which
 * is what a crash in the middle of an append leaves and says nothing.
 */
import type { DurableOp } from '../../ports/durable-state.js';
import { describeIssues, durableOpSchema } from './persisted-schemas.js';
import { errorMessage } from '../../domain/error-message.js';

/** At most this many bad lines get a line of their own in the hall's log; the rest are counted. */
const REPORTED_LINES = 10;

export function parseLog(text: string, file: string, warn: (message: string) => void): DurableOp[] {
  const lines = text.split('\n');
  // A log whose last append was cut short does not end with a newline.
  const torn = text !== '' && !text.endsWith('\n') ? lines.length - 1 : -1;
  const ops: DurableOp[] = [];
  let bad = 0;
  lines.forEach((line, i) => {
    if (line === '') return;
    const problem = parseLine(line, ops);
    if (problem === null || i === torn) return;
    if (++bad <= REPORTED_LINES) warn(`${file}:${i + 1}: ${problem}; line skipped`);
  });
  if (bad > REPORTED_LINES) warn(`${file}: ${bad - REPORTED_LINES} more unreadable lines skipped`);
  return ops;
}

/** Adds the line's operation to `ops`; returns what is wrong with it, or null. */
function parseLine(line: string, ops: DurableOp[]): string | null {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (err) {
    return `not valid JSON (${errorMessage(err)})`;
  }
  const parsed = durableOpSchema.safeParse(raw);
  if (!parsed.success) return `not an operation of this hall (${describeIssues(parsed.error)})`;
  ops.push(parsed.data);
  return null;
}
