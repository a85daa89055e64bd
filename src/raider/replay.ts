/**
 * Reading a journal back: damaged lines are skipped
 * and listed, and a resumed conversation is rebuilt from `message` records.
 * Nothing is executed during replay.
 */
import { readFileSync } from 'node:fs';
import type { HistoryEntry } from './engines/engine.js';
import { z } from 'zod';

/** A journal line: an object with a `type`, its other fields as they were written. */
const JournalRecordSchema = z.looseObject({ type: z.string() });
export type JournalRecord = z.infer<typeof JournalRecordSchema>;

export interface JournalContents {
  records: JournalRecord[];
  /** 1-based numbers of lines that are not complete JSON objects with a type. */
  damaged: number[];
}

export function parseJournal(text: string): JournalContents {
  const records: JournalRecord[] = [];
  const damaged: number[] = [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, i) => {
    try {
      const read = JournalRecordSchema.safeParse(JSON.parse(line));
      if (read.success) {
        records.push(read.data);
        return;
      }
    } catch {
      // falls through to damaged
    }
    damaged.push(i + 1);
  });
  return { records, damaged };
}

export function readJournal(path: string): JournalContents {
  return parseJournal(readFileSync(path, 'utf8'));
}

/**
 * The working conversation of a resumed session: user and assistant
 * messages after the last `history.cleared`, only of runs that produced an
 * assistant message (a failed or cancelled run leaves no half-turn behind),
 * plus messages without a run (a fork's copied history), which always count.
 */
export function conversationFromJournal(records: readonly JournalRecord[]): HistoryEntry[] {
  let start = 0;
  records.forEach((r, i) => {
    if (r.type === 'history.cleared') start = i + 1;
  });
  const tail = records.slice(start);
  const answered = new Set(
    tail.filter((r) => r.type === 'message' && r.role === 'assistant' && typeof r.run === 'string').map((r) => r.run),
  );
  const history: HistoryEntry[] = [];
  for (const r of tail) {
    if (r.type !== 'message' || typeof r.content !== 'string') continue;
    if (r.run !== undefined && !answered.has(r.run)) continue;
    if (r.role === 'user') history.push({ role: 'user', content: r.content });
    else if (r.role === 'assistant') history.push({ role: 'assistant', content: r.content });
  }
  return history;
}

/**
 * Rules granted "for this session" over the permission channel in earlier
 * runs (`permission` records answered `session`), so a resumed session
 * does not ask again what its user already allowed.
 */
export function sessionRulesFromJournal(records: readonly JournalRecord[]): string[] {
  const rules: string[] = [];
  for (const r of records) {
    if (r.type === 'permission' && r.answer === 'session' && typeof r.rule === 'string' && !rules.includes(r.rule)) rules.push(r.rule);
  }
  return rules;
}
