/**
 * Sessions as the dashboard shows them: the bindings with the session each
 * continues (the socket's `sessions` reply), every journal under
 * `.raider/sessions/` (ACP sessions and forgotten ones included), and one
 * journal's lines read back (messages, tool calls and results, permission
 * decisions). A journal is found by its id only: no request builds a path.
 */
import fs from 'node:fs';
import type { HallQueries } from '../../ports/hall-queries.js';
import { journalPath, SESSION_ID_RE, sessionsDir } from '../../protocol/session-journal.js';
import { readJsonLinesTail } from './json-lines-tail.js';
import { definedFields } from '../../domain/defined-fields.js';

/** The list shows this many journals at most, the newest first. */
const JOURNALS_LISTED = 200;
/** A journal's page shows at most this much of it: the newest part. */
const JOURNAL_TAIL_BYTES = 2 * 1024 * 1024;

export interface JournalRow {
  session: string;
  /** Epoch ms of the journal's last write. */
  last_used: number;
  bytes: number;
  /** The binding that continues it now, when one does. */
  binding?: string;
}

export interface SessionsView {
  bindings: Array<{ binding: string; session: string; last_used?: number }>;
  journals: JournalRow[];
}

type Binding = SessionsView['bindings'][number];

/** The bindings and their sessions (the `sessions` reply has no error case, but its type allows one). */
function boundSessions(queries: HallQueries): Binding[] {
  const reply = queries.sessions();
  return 'sessions' in reply ? reply.sessions : [];
}

export function listSessions(root: string, queries: HallQueries): SessionsView {
  const bindings = boundSessions(queries);
  const boundBy = new Map(bindings.map((b) => [b.session, b.binding]));
  let names: string[];
  try {
    names = fs.readdirSync(sessionsDir(root));
  } catch {
    names = [];
  }
  const journals: JournalRow[] = [];
  for (const name of names) {
    const session = name.endsWith('.jsonl') ? name.slice(0, -'.jsonl'.length) : '';
    if (!SESSION_ID_RE.test(session)) continue;
    const stat = fs.statSync(journalPath(root, session), { throwIfNoEntry: false });
    if (!stat) continue;
    const binding = boundBy.get(session);
    journals.push({ session, last_used: Math.round(stat.mtimeMs), bytes: stat.size, ...definedFields({ binding }) });
  }
  journals.sort((a, b) => b.last_used - a.last_used || (a.session < b.session ? 1 : -1));
  return { bindings, journals: journals.slice(0, JOURNALS_LISTED) };
}

/** One journal's lines (its newest 2 MiB), or null when there is no such session. */
export function readJournal(
  root: string,
  queries: HallQueries,
  session: string,
): { session: string; binding?: string; entries: unknown[]; truncated: boolean } | null {
  if (!SESSION_ID_RE.test(session)) return null;
  const tail = readJsonLinesTail(journalPath(root, session), JOURNAL_TAIL_BYTES);
  if (tail === null) return null;
  const binding = boundSessions(queries).find((b) => b.session === session)?.binding;
  return { session, ...definedFields({ binding }), entries: tail.lines, truncated: tail.truncated };
}
