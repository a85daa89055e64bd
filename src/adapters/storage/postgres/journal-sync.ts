/**
 * A binding's session journal across the halls of a shared cluster: the
 * journal is a file in the root of the hall that runs the session
 * (`.raider/sessions/ID.jsonl`, appended to by the raider), and the next
 * mission of the binding may run on another hall. So the journal also lives
 * in `raider_hall_journal_chunks`, as the pieces each run appended:
 *
 * - `push`, when a run of the session ends and before its end (which frees
 *   the binding) is committed: what the local journal holds beyond the
 *   database's copy goes in as one more piece;
 * - `pull`, before a hall starts a run of the session: its local journal is
 *   brought up to the database's copy (the missing pieces appended, or the
 *   file rewritten when it is not a prefix of that copy);
 * - `prune`, with the cluster's other sweeps: the journals of sessions no
 *   binding holds any more (a reset) and no run still goes on with leave.
 */
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { z } from 'zod';
import { errorMessage } from '../../../domain/error-message.js';
import { journalPath } from '../../../protocol/session-journal.js';
import { writeFileAtomicSync } from '../atomic-file.js';
import type { SessionJournals } from '../../../ports/cluster-queue.js';

const SIZE = `SELECT coalesce(max(start + octet_length(data)), 0)::bigint AS size
FROM raider_hall_journal_chunks WHERE cluster = $1 AND session = $2`;

/**
 * The piece goes in only at the end of the database's copy, and only while
 * this hall still holds the run: a hall that was taken for lost does not
 * write over what ran since elsewhere.
 */
const PUSH = `INSERT INTO raider_hall_journal_chunks (cluster, session, start, data, hall)
SELECT $1, $2, $3, $4, $5
WHERE EXISTS (SELECT 1 FROM raider_hall_runs WHERE cluster = $1 AND id = $6 AND hall = $5)
  AND $3 = (SELECT coalesce(max(start + octet_length(data)), 0) FROM raider_hall_journal_chunks WHERE cluster = $1 AND session = $2)
ON CONFLICT (cluster, session, start) DO NOTHING`;

/**
 * The journals of sessions that no binding holds (its binding was reset, or bound to another session) and
 * no run goes on with. A session a run just created is in that run's row (its record) from before its
 * first piece is written until the run ends, and its binding commits before or with that end, so a
 * session in use is never without one of the two. An ACP session the cluster remembers (state namespace
 * `acp`: session/load can bring it back on any hall) keeps its journal after its client left and its
 * binding went, until session/close forgets it.
 */
const PRUNE = `DELETE FROM raider_hall_journal_chunks j WHERE j.cluster = $1
  AND NOT EXISTS (SELECT 1 FROM raider_hall_sessions s WHERE s.cluster = j.cluster AND s.session = j.session)
  AND NOT EXISTS (SELECT 1 FROM raider_hall_runs r WHERE r.cluster = j.cluster AND r.record->>'session' = j.session)
  AND NOT EXISTS (SELECT 1 FROM raider_hall_kv k WHERE k.cluster = j.cluster AND k.ns = 'acp' AND k.key = j.session)`;

/** A session's first piece, only when the cluster has none of its journal (a run elsewhere may have written it). */
const SEED = `INSERT INTO raider_hall_journal_chunks (cluster, session, start, data, hall)
SELECT $1, $2, 0, $3, $4
WHERE NOT EXISTS (SELECT 1 FROM raider_hall_journal_chunks WHERE cluster = $1 AND session = $2)
ON CONFLICT (cluster, session, start) DO NOTHING`;

const pieceRow = z.object({ start: z.union([z.string(), z.number()]), size: z.union([z.string(), z.number()]) });
const dataRow = z.object({ start: z.union([z.string(), z.number()]), data: z.instanceof(Buffer) });

export class PostgresJournals implements SessionJournals {
  constructor(
    private readonly pool: pg.Pool,
    private readonly cluster: string,
    private readonly hallId: string,
    private readonly root: string,
    private readonly warn: (line: string) => void,
  ) {}

  /** Appends to the database what the run `runId` added to the local journal; on the connection the run's end goes on next. */
  async push(db: pg.ClientBase, session: string, runId: string): Promise<void> {
    let local: Buffer;
    try {
      local = fs.readFileSync(journalPath(this.root, session));
    } catch (err) {
      // Nothing to share (the raider never wrote it): the next hall starts the binding's session over.
      this.warn(`cannot share the journal of session ${session} with the cluster: ${errorMessage(err)}`);
      return;
    }
    const size = Number((await db.query<{ size: string }>(SIZE, [this.cluster, session])).rows[0]?.size ?? 0);
    if (local.length === size) return;
    if (local.length < size) {
      this.warn(
        `the journal of session ${session} here (${local.length} bytes) is shorter than the cluster's (${size}): ` +
          `run ${runId} did not continue the cluster's copy; its turns stay on this hall`,
      );
      return;
    }
    await db.query(PUSH, [this.cluster, session, size, local.subarray(size), this.hallId, runId]);
  }

  async seed(session: string): Promise<void> {
    let local: Buffer;
    try {
      local = fs.readFileSync(journalPath(this.root, session));
    } catch {
      return; // Nothing here to share.
    }
    if (local.length === 0) return;
    await this.pool.query(SEED, [this.cluster, session, local, this.hallId]);
  }

  async pull(session: string): Promise<void> {
    const file = journalPath(this.root, session);
    const pieces = await this.pool.query(
      'SELECT start, octet_length(data) AS size FROM raider_hall_journal_chunks WHERE cluster = $1 AND session = $2 ORDER BY start',
      [this.cluster, session],
    );
    const index = pieces.rows.map((raw) => {
      const row = pieceRow.parse(raw);
      return { start: Number(row.start), size: Number(row.size) };
    });
    const last = index.at(-1);
    if (last === undefined) return;
    const total = last.start + last.size;
    const localSize = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    // Same size and the same last piece: the same journal (a copy that went its own way differs at its end).
    if (localSize === total && (await this.sameAs(file, session, last))) return;
    // The local file continues where a piece starts and its last piece is the database's: append the rest.
    const before = index.find((p) => p.start + p.size === localSize);
    if (localSize < total && (localSize === 0 || (before !== undefined && (await this.sameAs(file, session, before))))) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.appendFileSync(file, await this.bytesFrom(session, localSize));
      return;
    }
    // Not a prefix of the cluster's copy (a hall taken for lost wrote on alone): the cluster's copy wins.
    this.warn(`the journal of session ${session} here differs from the cluster's; replaced by the cluster's (${total} bytes)`);
    // Durable before the run starts on it: a crash leaves the old journal or the cluster's, never a torn one.
    writeFileAtomicSync(file, await this.bytesFrom(session, 0));
  }

  /** Drops the journals no binding and no run uses any more (see PRUNE). */
  async prune(): Promise<void> {
    await this.pool.query(PRUNE, [this.cluster]);
  }

  /** The database's pieces from byte `from` (a piece's start) on, as one buffer. */
  private async bytesFrom(session: string, from: number): Promise<Buffer> {
    const rows = await this.pool.query(
      'SELECT start, data FROM raider_hall_journal_chunks WHERE cluster = $1 AND session = $2 AND start >= $3 ORDER BY start',
      [this.cluster, session, from],
    );
    return Buffer.concat(rows.rows.map((raw) => dataRow.parse(raw).data));
  }

  /** Whether the local file holds the database's piece where the piece says. */
  private async sameAs(file: string, session: string, piece: { start: number; size: number }): Promise<boolean> {
    const row = await this.pool.query('SELECT data FROM raider_hall_journal_chunks WHERE cluster = $1 AND session = $2 AND start = $3', [
      this.cluster,
      session,
      piece.start,
    ]);
    const data = dataRow.pick({ data: true }).safeParse(row.rows[0]);
    if (!data.success) return false;
    const fd = fs.openSync(file, 'r');
    try {
      const local = Buffer.alloc(piece.size);
      fs.readSync(fd, local, 0, piece.size, piece.start);
      return local.equals(data.data.data);
    } finally {
      fs.closeSync(fd);
    }
  }
}
