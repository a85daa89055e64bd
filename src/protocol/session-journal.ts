/**
 * Session journals: `<root>/.raider/sessions/<id>.jsonl`,
 * one canonical JSON object per line, `{v:1, seq, time, type, run?, ...}`.
 * A wire format shared by the raider, which records its runs in them
 * (src/raider/journal.ts writes under the session's lock), and the hall,
 * which creates and finds sessions for its bindings. Only the project
 * scope is implemented.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { canonicalLine, epochSeconds, writeAllSync } from './canonical-line.js';
import { errorCode } from '../domain/error-message.js';

export const JOURNAL_VERSION = 1;
export const SESSION_ID_RE = /^\d{8}-\d{6}-[0-9a-f]{4}$/;

/** The records of a journal (docs/raider.md, "Sessions"); `session.created` is always the first line. */
export type JournalRecordType = 'session.created' | 'run.started' | 'message' | 'tool.call' | 'tool.result' | 'permission' | 'run.finished';

/** The fields every record carries, set last so a record's own fields never override them. */
export interface JournalRecordHead {
  v: typeof JOURNAL_VERSION;
  seq: number;
  /** Epoch seconds. */
  time: number;
  type: JournalRecordType;
  /** The run (`r1`, `r2`, ...) a record of a run belongs to. */
  run?: string;
}
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

/** One journal record as its line (without the newline). */
export function journalLine(seq: number, type: JournalRecordType, fields: Record<string, unknown>): string {
  const head: Omit<JournalRecordHead, 'run'> = { v: JOURNAL_VERSION, seq, time: epochSeconds(), type };
  return canonicalLine({ ...fields, ...head });
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
