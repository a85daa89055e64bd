/**
 * The raider's side of its session journal (the format is in
 * src/protocol/session-journal.ts): a session named by a reference, and the
 * writer that appends a run's records under the session's lock.
 */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { writeAllSync } from '../protocol/canonical-line.js';
import { journalLine, journalPath, type JournalRecordType, listSessionIds, lockPath } from '../protocol/session-journal.js';
import { errorMessage, SessionInUseError, UsageError } from './errors.js';
import { type HeldLock, tryLockExclusive } from './lock.js';

/** A session reference that names no session, or several (exit 2). */
export class SessionRefError extends UsageError {}

/**
 * A session id from a reference: the full id, a unique prefix of at least
 * 4 characters, or the last 4 hex digits. Ambiguous candidates are listed
 * newest first.
 */
export function resolveSessionRef(root: string, ref: string): string {
  const ids = listSessionIds(root);
  if (ids.includes(ref)) return ref;
  let matches: string[] = [];
  if (ref.length >= 4 && ref.length <= 20 && /^[0-9a-f-]+$/.test(ref)) {
    matches = ids.filter((id) => id.startsWith(ref) || (/^[0-9a-f]{4}$/.test(ref) && id.endsWith(`-${ref}`)));
  }
  const [only, ...others] = matches;
  if (only === undefined) throw new SessionRefError(`unknown session ${ref}`);
  if (others.length > 0) throw new SessionRefError(`session ${ref} is ambiguous: ${matches.reverse().join(', ')}`);
  return only;
}

/** Where a journal's numbering stands, and whether its last line was torn. */
export interface JournalTail {
  lastSeq: number;
  lastRun: number;
  tornLastLine: boolean;
}

export function scanJournalTail(text: string): JournalTail {
  let lastSeq = 0;
  let lastRun = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      continue; // a damaged line numbers nothing
    }
    if (!rec || typeof rec !== 'object') continue;
    const { seq, run } = rec as { seq?: unknown; run?: unknown };
    if (typeof seq === 'number' && seq > lastSeq) lastSeq = seq;
    const m = typeof run === 'string' ? /^r(\d+)$/.exec(run) : null;
    if (m && Number(m[1]) > lastRun) lastRun = Number(m[1]);
  }
  return { lastSeq, lastRun, tornLastLine: text.length > 0 && !text.endsWith('\n') };
}

export interface JournalWriter {
  readonly id: string;
  readonly path: string;
  /** The next run id (`r1`, `r2`, … continuing the file's numbering). */
  nextRun(): string;
  /** Append one record; the common fields are set last and cannot be overridden. */
  append(type: JournalRecordType, fields: Record<string, unknown>, run?: string): void;
  /** Release the lock. The journal file stays. */
  close(): void;
}

export interface OpenJournalOptions {
  /** Told once per run when a write fails; the run goes on. */
  warn?: (message: string) => void;
}

/**
 * Open a session for writing: take its lock (or throw SessionInUseError at
 * once, never waiting), read it once under the lock, and continue its
 * numbering. A journal that does not end in a newline gets one before the
 * next record, so a torn last line never swallows the next one.
 */
export async function openJournalWriter(root: string, id: string, opts: OpenJournalOptions = {}): Promise<JournalWriter> {
  const path = journalPath(root, id);
  const lock: HeldLock | undefined = await tryLockExclusive(lockPath(root, id));
  if (!lock) throw new SessionInUseError(id);
  let fd: number;
  let tail: JournalTail;
  try {
    tail = scanJournalTail(readFileSync(path, 'utf8'));
    fd = openSync(path, 'a');
  } catch (err) {
    lock.release();
    throw err;
  }
  let seq = tail.lastSeq;
  let runNumber = tail.lastRun;
  let needNewline = tail.tornLastLine;
  const warnedRuns = new Set<string>();
  let closed = false;

  return {
    id,
    path,
    nextRun: () => `r${++runNumber}`,
    append(type, fields, run) {
      if (closed) return;
      const line = journalLine(++seq, type, run === undefined ? fields : { ...fields, run });
      try {
        writeAllSync(fd, `${needNewline ? '\n' : ''}${line}\n`);
        needNewline = false;
      } catch (err) {
        needNewline = true; // a half-written line must not glue onto the next one
        const key = run ?? '';
        if (!warnedRuns.has(key)) {
          warnedRuns.add(key);
          opts.warn?.(`warning: session ${id} not fully saved: ${errorMessage(err)}`);
        }
      }
    },
    close() {
      if (closed) return;
      closed = true;
      closeSync(fd);
      lock.release();
    },
  };
}
