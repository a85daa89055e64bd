/**
 * The dashboard's own JSON-lines files of timed figures (the queue depth
 * samples, the queue waits): one object with `t` (epoch ms) per line,
 * appended as they happen and trimmed to the last day at the hall's start.
 */
import fs from 'node:fs';
import type { z } from 'zod';
import { parseJsonLine } from '../../protocol/json-line.js';

/** The lines of `file` that `schema` takes, with `t` at or after `from`, oldest first; none when it cannot be read. */
export function readTimedLines<T extends { t: number }>(file: string, schema: z.ZodType<T>, from: number): T[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const kept: T[] = [];
  for (const line of text.split('\n')) {
    // A half line, or the empty one after the last, is no figure.
    const parsed = parseJsonLine(line, schema);
    if (parsed !== null && parsed.t >= from) kept.push(parsed);
  }
  return kept;
}

/** Rewrites `file` with its lines from `from` on. */
export function trimTimedLines<T extends { t: number }>(file: string, schema: z.ZodType<T>, from: number): void {
  const kept = readTimedLines(file, schema, from);
  try {
    fs.writeFileSync(file, kept.map((line) => `${JSON.stringify(line)}\n`).join(''));
  } catch {
    /* no directory yet or not writable: the next append says so */
  }
}
