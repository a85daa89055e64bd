/**
 * What the hall remembers of ACP sessions across restarts (state namespace
 * `acp`): the raider, working directory and mode of each session, so
 * session/list, session/load and session/resume can bring it back. The
 * conversation itself is the session's journal.
 */
import type { HallStateStore } from '../storage/state-store.js';

export interface AcpSessionRecord {
  raider: string;
  cwd: string;
  mode: string;
  /** The first prompt, cut: the title session/list shows. */
  title?: string;
  /** ISO time of the last prompt. */
  updatedAt: string;
}

const NS = 'acp';

export class AcpSessionStore {
  constructor(private readonly store: HallStateStore) {}

  get(sessionId: string): AcpSessionRecord | undefined {
    const value = this.store.state.get(NS, sessionId);
    return value && typeof value === 'object' ? (value as AcpSessionRecord) : undefined;
  }

  async put(sessionId: string, record: AcpSessionRecord): Promise<void> {
    this.store.apply({ op: 'set', ns: NS, key: sessionId, value: record });
    await this.store.commit();
  }

  /** Newest first. */
  list(): Array<{ sessionId: string } & AcpSessionRecord> {
    const entries = [...(this.store.state.kv.get(NS) ?? new Map<string, unknown>())];
    return entries
      .filter(([, v]) => v && typeof v === 'object')
      .map(([sessionId, v]) => ({ sessionId, ...(v as AcpSessionRecord) }))
      .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
  }
}
