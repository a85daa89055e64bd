/**
 * Which journal a run writes to, from `--session`/`--continue`/`--no-session`,
 * and the conversation it resumes. Resolving the reference is
 * split from opening it so that usage errors (exit 2) are found before
 * configuration errors (exit 3), and the lock (exit 4) is taken last.
 */
import type { SessionChoice } from './args.js';
import type { HistoryEntry } from './engines/engine.js';
import { errorMessage, RaiderExit } from './errors.js';
import { createSession, newestSessionId, sessionsDir } from '../protocol/session-journal.js';
import { type JournalWriter, openJournalWriter, resolveSessionRef, SessionRefError } from './journal.js';
import { conversationFromJournal, readJournal, sessionRulesFromJournal } from './replay.js';
import { RAIDER_VERSION } from '../protocol/raider-version.js';

/** `undefined`: no journal; `'new'`: a fresh one; else the id to continue. */
export type SessionTarget = undefined | 'new' | { id: string };

export function resolveSessionTarget(choice: SessionChoice, root: string): SessionTarget {
  switch (choice.kind) {
    case 'none':
      return undefined;
    case 'new':
      return 'new';
    case 'resume':
      return { id: resolveSessionRef(root, choice.ref) };
    case 'continue': {
      const id = newestSessionId(root);
      if (!id) throw new SessionRefError(`no session to continue in ${sessionsDir(root)}`);
      return { id };
    }
  }
}

export interface OpenedSession {
  writer: JournalWriter | undefined;
  /** The resumed conversation (empty for a new session). */
  history: HistoryEntry[];
  /** Permission rules granted for this session in earlier runs. */
  sessionRules: string[];
}

/** A session that exists but cannot be opened or replayed: the run fails (exit 1). */
export class SessionOpenError extends RaiderExit {
  readonly exitCode = 1;
}

export async function openSession(target: SessionTarget, root: string, warn: (message: string) => void): Promise<OpenedSession> {
  if (target === undefined) return { writer: undefined, history: [], sessionRules: [] };
  if (target === 'new') {
    // A journal that cannot be created must not stop the run: it goes on without one.
    try {
      const created = createSession(root, { raiderVersion: RAIDER_VERSION });
      return { writer: await openJournalWriter(root, created.id, { warn }), history: [], sessionRules: [] };
    } catch (err) {
      warn(`session not saved: ${errorMessage(err)}`);
      return { writer: undefined, history: [], sessionRules: [] };
    }
  }
  let writer: JournalWriter;
  try {
    writer = await openJournalWriter(root, target.id, { warn });
  } catch (err) {
    if (err instanceof RaiderExit) throw err; // in use: exit 4
    throw new SessionOpenError(`cannot open session ${target.id}: ${errorMessage(err)}`);
  }
  try {
    // Read under the lock, so no other writer can be halfway through a run.
    const { records } = readJournal(writer.path);
    return { writer, history: conversationFromJournal(records), sessionRules: sessionRulesFromJournal(records) };
  } catch (err) {
    writer.close();
    throw new SessionOpenError(`cannot replay session ${target.id}: ${errorMessage(err)}`);
  }
}
