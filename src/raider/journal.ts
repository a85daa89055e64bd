/**
 * Session journals: `<root>/.raider/sessions/<id>.jsonl`,
 * one canonical JSON object per line, `{v:1, seq, time, type, run?, ...}`.
 * Used by the raider to record its runs, and by the hall to create and find
 * sessions for its bindings. Only the project scope is implemented.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { canonicalLine, epochSeconds, writeAllSync } from './canonical.js';
import { errorMessage, SessionInUseError, UsageError } from './errors.js';
import { tryLockExclusive, type HeldLock } from './lock.js';
import { errorCode } from '../domain/error-message.js';

export const JOURNAL_VERSION = 1;
export const SESSION_ID_RE = /^\d{8}-\d{6}-[0-9a-f]{4}$/;
const CREATE_ATTEMPTS = 100;

/** `YYYYMMDD-HHMMSS-xxxx`: UTC time plus four random hex digits, so ids sort by creation time. */
export function newSessionId(now: Date, hex4: string = randomBytes(2).toString('hex')): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  const date = `${p(now.getUTCFullYear(), 4)}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}`;
  const time = `${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  return `${date}-${time}-${hex4}`;
}

export function sessionsDir(root: string): string {
  return join(resolve(root), '.raider', 'sessions');
}

/** The journal of a session id; refuses anything that is not an id, so user input never builds a path. */
export function journalPath(root: string, id: string): string {
  if (!SESSION_ID_RE.test(id)) throw new Error(`not a session id: ${id}`);
  return join(sessionsDir(root), `${id}.jsonl`);
}

export function lockPath(root: string, id: string): string {
  if (!SESSION_ID_RE.test(id)) throw new Error(`not a session id: ${id}`);
  return join(sessionsDir(root), `${id}.lock`);
}

export interface SessionFile {
  id: string;
  /** Absolute path of the journal. */
  path: string;
}

export interface CreateSessionOptions {
  /** Written as `raider` in `session.created`. */
  raiderVersion: string;
  principal?: string;
  now?: () => Date;
  /** Four hex digits for the id; random unless a test needs to force a collision. */
  randomHex?: () => string;
}

function localPrincipal(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'unknown';
  }
}

/**
 * Create a new journal whose first line is `session.created`. The file is
 * made with O_CREAT|O_EXCL and a fresh id is drawn on a collision, so an
 * existing journal is never reused. Takes no lock: the writer does.
 */
export function createSession(root: string, opts: CreateSessionOptions): SessionFile {
  const absRoot = resolve(root);
  const dir = sessionsDir(absRoot);
  mkdirSync(dir, { recursive: true });
  try {
    writeFileSync(join(absRoot, '.raider', '.gitignore'), 'sessions/\nlib/\n', { flag: 'wx' });
  } catch (err) {
    if (errorCode(err) !== 'EEXIST') throw err;
  }
  const now = opts.now ?? (() => new Date());
  for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
    const id = newSessionId(now(), opts.randomHex?.());
    const path = journalPath(absRoot, id);
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (err) {
      if (errorCode(err) === 'EEXIST') continue;
      throw err;
    }
    try {
      const created = {
        id,
        scope: 'project',
        root: absRoot,
        principal: opts.principal ?? localPrincipal(),
        raider: opts.raiderVersion,
      };
      writeAllSync(fd, `${journalLine(1, 'session.created', created)}\n`);
    } finally {
      closeSync(fd);
    }
    return { id, path };
  }
  throw new Error(`cannot create a session in ${dir}: ${CREATE_ATTEMPTS} id collisions`);
}

function journalLine(seq: number, type: string, fields: Record<string, unknown>): string {
  return canonicalLine({ ...fields, v: JOURNAL_VERSION, seq, time: epochSeconds(), type });
}

/** The session ids of a project, oldest first (ids sort by creation time). */
export function listSessionIds(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(sessionsDir(root));
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return [];
    throw err;
  }
  return names
    .filter((n) => n.endsWith('.jsonl'))
    .map((n) => n.slice(0, -'.jsonl'.length))
    .filter((id) => SESSION_ID_RE.test(id))
    .sort();
}

export function newestSessionId(root: string): string | undefined {
  return listSessionIds(root).at(-1);
}

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
  append(type: string, fields: Record<string, unknown>, run?: string): void;
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
