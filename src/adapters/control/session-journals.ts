/** When a session was last used: its journal's mtime (`.raider/sessions/ID.jsonl`). */
import fs from 'node:fs';
import { journalPath } from '../../protocol/session-journal.js';

/** Epoch ms of the journal's last write; undefined when there is no journal (or the id is not a session id). */
export function journalLastWritten(root: string, session: string): number | undefined {
  try {
    const mtime = fs.statSync(journalPath(root, session), { throwIfNoEntry: false })?.mtimeMs;
    return mtime === undefined ? undefined : Math.round(mtime);
  } catch {
    return undefined;
  }
}
