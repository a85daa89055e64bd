/**
 * What the hall remembers of ACP sessions across restarts (state namespace
 * `acp`): the raider, working directory and mode of each session, so
 * session/list, session/load and session/resume can bring it back. The
 * conversation itself is the session's journal.
 */
import { z } from 'zod';
import type { HallStateStore } from '../../ports/state-store.js';

/** A session as the `acp` namespace keeps it; read back through this schema (a value that does not read so is no session). */
const AcpSessionRecordSchema = z.object({
  raider: z.string(),
  cwd: z.string(),
  mode: z.string(),
  /** The first prompt, cut: the title session/list shows. */
  title: z.string().optional(),
  /** ISO time of the last prompt. */
  updatedAt: z.string(),
});

export type AcpSessionRecord = z.infer<typeof AcpSessionRecordSchema>;

const NS = 'acp';

export class AcpSessionStore {
  constructor(private readonly store: HallStateStore) {}

  get(sessionId: string): AcpSessionRecord | undefined {
    const read = AcpSessionRecordSchema.safeParse(this.store.state.get(NS, sessionId));
    return read.success ? read.data : undefined;
  }

  async put(sessionId: string, record: AcpSessionRecord): Promise<void> {
    this.store.apply({ op: 'set', ns: NS, key: sessionId, value: record });
    await this.store.commit();
  }

  /** Newest first. */
  list(): Array<{ sessionId: string } & AcpSessionRecord> {
    const sessions: Array<{ sessionId: string } & AcpSessionRecord> = [];
    for (const [sessionId, value] of this.store.state.kv.get(NS) ?? new Map<string, unknown>()) {
      const read = AcpSessionRecordSchema.safeParse(value);
      if (read.success) sessions.push({ sessionId, ...read.data });
    }
    return sessions.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
  }
}
