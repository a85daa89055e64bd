/**
 * The shared cluster's queue on PostgreSQL (docs/cluster.md, "Several halls
 * on one cluster"): missions submitted by any hall wait in
 * `raider_hall_missions`; a hall claims the heads of their queues with
 * `FOR UPDATE SKIP LOCKED` while it has room; a hall whose lease expired is
 * taken over in one transaction. NOTIFY on the cluster's channel is the
 * doorbell; the callers also poll, as a notification sent while a listener
 * was reconnecting is lost.
 */
import pg, { escapeLiteral } from 'pg';
import { z } from 'zod';
import type { Mission } from '../../../domain/mission.js';
import type { BusEvent } from '../../../machines/hall-effects.js';
import type {
  ClaimedMission,
  ClusterEvent,
  ClusterHall,
  LostRun,
  QueuedMission,
  RemoteRun,
  RemoteSignal,
  SharedQueue,
} from '../cluster-queue.js';
import { ledgerRunSchema, missionSchema } from './load-state.js';
import type { PostgresRunOutputs } from './run-outputs.js';
import type { PostgresJournals } from './journal-sync.js';
import { inline, missionKeys } from './op-statements.js';
import { formatRunId } from '../../../domain/run-id.js';
import { slotOf } from '../../../domain/names.js';
import { PostgresClusterFaces } from './cluster-faces.js';
import { PostgresClusterQuestions } from './cluster-questions.js';

const LISTEN_RETRY_MS = 1_000;
/** Events older than this leave the table (a hall relays what came since it started, read every half second). */
const EVENTS_KEEP = '10 minutes';
/** At most this many events per read: a hall that fell behind catches up over a few reads. */
const EVENTS_PAGE = 500;

/**
 * Only the head of a serial slot and of a binding, with no run of either
 * alive, may be claimed. A claimed mission holds its keys whatever its seq
 * (one moved to the front with queue_front may go below it while it starts);
 * equal seqs (two moves at once) are ordered by id.
 */
const CLAIM = `WITH picked AS (
  SELECT m.cluster, m.id FROM raider_hall_missions m
  WHERE m.cluster = $1 AND m.state = 'waiting'
    AND NOT EXISTS (
      SELECT 1 FROM raider_hall_missions e
      WHERE e.cluster = m.cluster AND e.id <> m.id AND ((e.seq, e.id) < (m.seq, m.id) OR e.state = 'claimed')
        AND ((m.serial_slot IS NOT NULL AND e.serial_slot = m.serial_slot) OR (m.binding IS NOT NULL AND e.binding = m.binding)))
    AND NOT EXISTS (
      SELECT 1 FROM raider_hall_runs r
      WHERE r.cluster = m.cluster
        AND ((m.serial_slot IS NOT NULL AND r.slot = m.serial_slot) OR (m.binding IS NOT NULL AND r.binding = m.binding)))
  ORDER BY m.seq
  LIMIT $3
  FOR UPDATE OF m SKIP LOCKED
)
UPDATE raider_hall_missions u SET state = 'claimed', hall = $2, claimed_at = now()
FROM picked WHERE u.cluster = picked.cluster AND u.id = picked.id
RETURNING u.seq, u.entry,
  (SELECT s.session FROM raider_hall_sessions s WHERE s.cluster = u.cluster AND s.binding = u.binding) AS session`;

const SUBMIT = `INSERT INTO raider_hall_missions (cluster, id, queue_kind, queue_key, seq, entry, serial_slot, binding)
VALUES ($1, $2, $3, $4, nextval('raider_hall_mission_seq'), $5::jsonb, $6, $7)
ON CONFLICT (cluster, id) DO NOTHING`;

/**
 * A mission's place in its queue: itself and the missions up to its seq (equal seqs too) of its serial
 * slot or binding. Counted for one mission over the whole queue, as `DEPTH_OF_ONE` does, a burst of k
 * submissions into a queue of n cost k scans of the queue, and pipelined submissions slowed as it grew.
 * `DEPTHS` counts a batch's places at once: the missions before the batch's first seq are counted once
 * per slot and binding pair of the batch (one scan of the queue per batch), and the rest, from that seq
 * on (the batch and whatever other halls committed among it), are numbered in seq order per serial
 * slot, per binding and per both, a place being the first two less the third.
 */
const DEPTHS = `WITH mine AS (
  SELECT id, seq, serial_slot, binding FROM raider_hall_missions WHERE cluster = $1 AND id = ANY($2::text[])
), since AS (
  SELECT min(seq) AS seq FROM mine
), recent AS (
  SELECT e.id,
    CASE WHEN e.serial_slot IS NULL THEN 0 ELSE count(*) OVER (PARTITION BY e.serial_slot ORDER BY e.seq) END
    + CASE WHEN e.binding IS NULL THEN 0 ELSE count(*) OVER (PARTITION BY e.binding ORDER BY e.seq) END
    - CASE WHEN e.serial_slot IS NULL OR e.binding IS NULL THEN 0
        ELSE count(*) OVER (PARTITION BY e.serial_slot, e.binding ORDER BY e.seq) END AS place
  FROM raider_hall_missions e, since
  WHERE e.cluster = $1 AND e.seq >= since.seq
    AND (e.serial_slot IN (SELECT serial_slot FROM mine) OR e.binding IN (SELECT binding FROM mine) OR e.id IN (SELECT id FROM mine))
), earlier AS MATERIALIZED ( -- once per pair: inlined, the count would run once per mission of the batch
  SELECT keys.serial_slot, keys.binding, (SELECT count(*) FROM raider_hall_missions e, since
    WHERE e.cluster = $1 AND e.seq < since.seq AND (e.serial_slot = keys.serial_slot OR e.binding = keys.binding)) AS n
  FROM (SELECT DISTINCT serial_slot, binding FROM mine) keys
)
SELECT mine.id AS depth_of, (earlier.n + greatest(recent.place, 1))::integer AS depth
FROM mine JOIN recent USING (id)
JOIN earlier ON earlier.serial_slot IS NOT DISTINCT FROM mine.serial_slot AND earlier.binding IS NOT DISTINCT FROM mine.binding`;
/** One mission's place: for a batch of one, planning `DEPTHS` costs more than counting its queue. */
const DEPTH_OF_ONE = `SELECT me.id AS depth_of, (SELECT count(*) FROM raider_hall_missions e
  WHERE e.cluster = me.cluster AND e.seq <= me.seq AND (e.id = me.id OR e.serial_slot = me.serial_slot OR e.binding = me.binding))::integer AS depth
FROM raider_hall_missions me WHERE me.cluster = $1 AND me.id = ANY($2::text[])`;
/** At most this many submissions per transaction (a script of a few hundred kilobytes at most). */
const SUBMIT_BATCH = 500;

interface PendingSubmission {
  entry: Mission;
  resolve: (queued: { depth: number }) => void;
  reject: (err: Error) => void;
}

/**
 * A waiting mission to the head of its queue (one less than the queue's
 * smallest seq), as the store's `front` operation does; `place`: where it was.
 */
const FRONT = `WITH me AS (
  SELECT id, queue_kind, queue_key, seq, entry FROM raider_hall_missions WHERE cluster = $1 AND id = $2 AND state = 'waiting' FOR UPDATE
), q AS (
  SELECT (count(*) FILTER (WHERE o.seq <= me.seq))::integer AS place, min(o.seq) AS head
  FROM raider_hall_missions o JOIN me ON o.queue_kind = me.queue_kind AND o.queue_key = me.queue_key
  WHERE o.cluster = $1
), moved AS (
  -- Carried out though nothing reads it, as every data-modifying WITH is.
  UPDATE raider_hall_missions m SET seq = q.head - 1 FROM q WHERE m.cluster = $1 AND m.id = $2 AND m.seq > q.head RETURNING m.id
)
SELECT me.entry, me.queue_kind, me.queue_key, q.place FROM me, q`;

/** The missions the halls `$2` claimed and did not start wait again, for any hall, in their places (their seq). */
export const RELEASE_CLAIMS =
  "UPDATE raider_hall_missions SET state = 'waiting', hall = NULL, claimed_at = NULL WHERE cluster = $1 AND state = 'claimed' AND hall = ANY($2)";

/**
 * A run ends once in the cluster (migration 005): a later `raider.done` of the same run (a stalled hall's own
 * end after a takeover reported the run lost, or a report written back) is not written.
 */
const ONE_END_PER_RUN =
  "ON CONFLICT (cluster, (event->>'id'), (coalesce(event->>'mission_id', ''))) WHERE event->>'type' = 'raider.done' DO NOTHING";

/** A lost run's session for its binding, unless the binding has one; only when the cluster has its journal. */
const BIND_LOST_SESSION = `INSERT INTO raider_hall_sessions (cluster, binding, session)
SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM raider_hall_journal_chunks WHERE cluster = $1 AND session = $3)
ON CONFLICT (cluster, binding) DO NOTHING`;

/** Every hall of the cluster with its lease's age and time left, and its runs (for the dashboard). */
const HALLS = `SELECT h.id, h.host, h.root, h.pid,
  (extract(epoch FROM h.started_at) * 1000)::float8 AS started_at,
  extract(epoch FROM now() - h.renewed_at)::float8 AS lease_age,
  extract(epoch FROM h.lease_until - now())::float8 AS lease_left,
  (SELECT count(*) FROM raider_hall_runs r WHERE r.cluster = h.cluster AND r.hall = h.id)::integer AS running
FROM raider_hall_halls h WHERE h.cluster = $1 ORDER BY h.id`;

const hallRow = z.object({
  id: z.string(),
  host: z.string(),
  root: z.string(),
  pid: z.number(),
  started_at: z.number(),
  lease_age: z.number(),
  lease_left: z.number(),
  running: z.number(),
});
const eventRow = z.object({ id: z.union([z.string(), z.number()]), hall: z.string(), event: z.looseObject({ type: z.string() }) });
const frontRow = z.object({ entry: z.unknown(), queue_kind: z.string(), queue_key: z.string(), place: z.number() });
const depthRow = z.object({ depth_of: z.string(), depth: z.number() });
const claimRow = z.object({ seq: z.union([z.string(), z.number()]), entry: z.unknown(), session: z.string().nullable() });
const lostRow = z.object({ hall: z.string(), record: z.unknown() });
const queuedRow = z.object({
  queue_kind: z.enum(['slot', 'binding']),
  queue_key: z.string(),
  hall: z.string().nullable(),
  entry: z.unknown(),
});

export class PostgresSharedQueue implements SharedQueue {
  private doorbells: Array<() => void> = [];
  private submissions: PendingSubmission[] = [];
  private submitting = false;
  private replacedListeners: Array<() => void> = [];
  private refusedListeners: Array<(runIds: readonly string[]) => void> = [];
  private listener: pg.Client | null = null;
  private listenTimer: NodeJS.Timeout | null = null;
  /** The LISTEN connection is open, or being opened or retried. */
  private listening = false;
  private closed = false;
  readonly faces: PostgresClusterFaces;
  readonly questions: PostgresClusterQuestions;

  constructor(
    private readonly pool: pg.Pool,
    private readonly connection: pg.ClientConfig,
    private readonly cluster: string,
    readonly hallId: string,
    readonly journals: PostgresJournals,
    readonly outputs: PostgresRunOutputs,
    private readonly warn: (line: string) => void,
  ) {
    this.faces = new PostgresClusterFaces(pool, cluster, hallId);
    this.questions = new PostgresClusterQuestions(pool, cluster, hallId, PostgresSharedQueue.channel(cluster));
  }

  /** The cluster's NOTIFY channel (a channel name is an identifier: quoted where it is used). */
  static channel(cluster: string): string {
    return `raider_hall:${cluster}`;
  }

  /**
   * Queues the mission in the cluster; resolves once its row is committed. Missions submitted while a
   * batch is on its way go together in the next one (group commit): a burst costs a few round trips
   * and one connection, not one transaction each on the pool.
   */
  submit(entry: Mission): Promise<{ depth: number }> {
    return new Promise((resolve, reject) => {
      this.submissions.push({ entry, resolve, reject });
      this.submitNext();
    });
  }

  private submitNext(): void {
    if (this.submitting || this.submissions.length === 0) return;
    this.submitting = true;
    // setImmediate lets every submission of this turn of the event loop join the batch.
    setImmediate(() => {
      const batch = this.submissions.splice(0, SUBMIT_BATCH);
      void this.submitBatch(batch).finally(() => {
        this.submitting = false;
        this.submitNext();
      });
    });
  }

  /** One script: the inserts in submission order (their seqs follow it), the depths, the doorbell, COMMIT. */
  private async submitBatch(batch: readonly PendingSubmission[]): Promise<void> {
    const lines = ['BEGIN'];
    for (const { entry } of batch) {
      const keys = missionKeys(entry);
      const [kind, key] =
        keys.serialSlot !== null ? ['slot', keys.serialSlot] : keys.binding !== null ? ['binding', keys.binding] : ['slot', entry.name];
      lines.push(
        inline({ text: SUBMIT, values: [this.cluster, entry.id, kind, key, JSON.stringify(entry), keys.serialSlot, keys.binding] }),
      );
    }
    const depths = batch.length === 1 ? DEPTH_OF_ONE : DEPTHS;
    lines.push(inline({ text: depths, values: [this.cluster, batch.map(({ entry }) => entry.id)] }));
    lines.push(`SELECT pg_notify(${escapeLiteral(PostgresSharedQueue.channel(this.cluster))}, '')`);
    lines.push('COMMIT');
    let db: pg.PoolClient | null = null;
    try {
      db = await this.pool.connect();
      const results: unknown = await db.query(`${lines.join(';\n')};`);
      db.release();
      const depths = new Map<string, number>();
      for (const result of Array.isArray(results) ? results : [results]) {
        const rows: unknown = typeof result === 'object' && result !== null && 'rows' in result ? result.rows : [];
        if (!Array.isArray(rows)) continue;
        for (const raw of rows) {
          const row = depthRow.safeParse(raw);
          if (row.success) depths.set(row.data.depth_of, row.data.depth);
        }
      }
      for (const { entry, resolve } of batch) resolve({ depth: depths.get(entry.id) ?? 1 });
    } catch (err) {
      if (db) {
        await db.query('ROLLBACK').catch(() => undefined);
        db.release(true);
      }
      for (const { reject } of batch) reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  async claim(limit: number): Promise<ClaimedMission[]> {
    if (limit <= 0) return [];
    const result = await this.pool.query(CLAIM, [this.cluster, this.hallId, limit]);
    const rows = result.rows.map((raw) => claimRow.parse(raw)).sort((a, b) => Number(a.seq) - Number(b.seq));
    const claimed: ClaimedMission[] = [];
    for (const row of rows) {
      const entry = missionSchema.safeParse(row.entry);
      if (!entry.success) {
        this.warn(
          `a claimed mission in the database is not readable (${z.prettifyError(entry.error)}); it stays claimed by ${this.hallId}`,
        );
        continue;
      }
      const at = Date.now();
      const runId = await this.reserveRunId(slotOf(entry.data.name).slot, at);
      claimed.push({ entry: entry.data, runId, at, ...(row.session !== null ? { session: row.session } : {}) });
    }
    return claimed;
  }

  /** The next free `SLOT-TIME[.N]` of the cluster for a run started at `at`. */
  private async reserveRunId(slot: string, at: number): Promise<string> {
    const sec = Math.floor(at / 1000);
    const result = await this.pool.query<{ n: number }>(
      `INSERT INTO raider_hall_run_ids (cluster, slot, sec, n) VALUES ($1, $2, $3, 1)
       ON CONFLICT (cluster, slot, sec) DO UPDATE SET n = raider_hall_run_ids.n + 1 RETURNING n`,
      [this.cluster, slot, sec],
    );
    return formatRunId(slot, { sec, n: result.rows[0]?.n ?? 1 });
  }

  async rescue(report: (lost: LostRun) => BusEvent): Promise<LostRun[]> {
    const expired = await this.pool.query(
      'SELECT 1 FROM raider_hall_halls WHERE cluster = $1 AND id <> $2 AND lease_until < now() LIMIT 1',
      [this.cluster, this.hallId],
    );
    if (expired.rowCount === 0) return [];
    const db = await this.pool.connect();
    try {
      await db.query('BEGIN');
      // One rescuer at a time per cluster; the DELETE ... RETURNING below makes each report happen once.
      await db.query("SELECT pg_advisory_xact_lock(hashtext('raider-hall:rescue:' || $1))", [this.cluster]);
      const halls = await db.query<{ id: string }>(
        'DELETE FROM raider_hall_halls WHERE cluster = $1 AND id <> $2 AND lease_until < now() RETURNING id',
        [this.cluster, this.hallId],
      );
      const lost = halls.rows.map((r) => r.id);
      let runs: LostRun[] = [];
      if (lost.length > 0) {
        // Back to the head of their queues: they keep their seq.
        await db.query(RELEASE_CLAIMS, [this.cluster, lost]);
        const deleted = await db.query('DELETE FROM raider_hall_runs WHERE cluster = $1 AND hall = ANY($2) RETURNING hall, record', [
          this.cluster,
          lost,
        ]);
        runs = deleted.rows.flatMap((raw) => {
          const row = lostRow.parse(raw);
          const run = ledgerRunSchema.safeParse(row.record);
          if (run.success) return [{ run: run.data, hall: row.hall }];
          this.warn(`a run of the lost hall ${row.hall} is not readable (${z.prettifyError(run.error)}); dropped`);
          return [];
        });
        // A session a lost run created and whose binding was not recorded yet (the hall was lost in the
        // moment between its raider's start and that record) stays its binding's, when its journal is here.
        for (const { run } of runs) {
          if (run.binding === undefined || run.session === undefined) continue;
          await db.query(BIND_LOST_SESSION, [this.cluster, run.binding, run.session]);
        }
        // The reports, naming the lost hall, are committed with the takeover or not at all; the other
        // halls relay them from the table (written as this hall's: the lost one, back, relays them too).
        for (const lost of runs) {
          await db.query(`INSERT INTO raider_hall_events (cluster, hall, event) VALUES ($1, $2, $3::jsonb) ${ONE_END_PER_RUN}`, [
            this.cluster,
            this.hallId,
            JSON.stringify({ ...report(lost), hall: lost.hall }),
          ]);
        }
        await db.query('SELECT pg_notify($1, $2)', [PostgresSharedQueue.channel(this.cluster), '']);
      }
      await db.query('COMMIT');
      db.release();
      for (const hall of lost)
        this.warn(
          `took over the lost hall ${hall} (its lease expired): ${runs.filter((r) => r.hall === hall).length} runs reported failed`,
        );
      return runs;
    } catch (err) {
      await db.query('ROLLBACK').catch(() => undefined);
      db.release(true);
      throw err;
    }
  }

  async shareEvents(events: readonly BusEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.pool.query(
      `WITH written AS (
         INSERT INTO raider_hall_events (cluster, hall, event) SELECT $1, $2, e FROM unnest($3::jsonb[]) AS e
         ${ONE_END_PER_RUN} RETURNING 1)
       SELECT pg_notify($4, '') FROM (SELECT 1 FROM written LIMIT 1) AS any_written`,
      [this.cluster, this.hallId, events.map((e) => JSON.stringify(e)), PostgresSharedQueue.channel(this.cluster)],
    );
  }

  async eventsSince(afterId: number | null): Promise<{ last: number; events: ClusterEvent[] }> {
    if (afterId === null) {
      const last = await this.pool.query<{ last: string | null }>(
        'SELECT max(id)::text AS last FROM raider_hall_events WHERE cluster = $1',
        [this.cluster],
      );
      return { last: Number(last.rows[0]?.last ?? 0), events: [] };
    }
    const result = await this.pool.query(
      'SELECT id, hall, event FROM raider_hall_events WHERE cluster = $1 AND id > $2 ORDER BY id LIMIT $3',
      [this.cluster, afterId, EVENTS_PAGE],
    );
    let last = afterId;
    const events: ClusterEvent[] = [];
    for (const raw of result.rows) {
      const row = eventRow.parse(raw);
      last = Math.max(last, Number(row.id));
      if (row.hall !== this.hallId) events.push({ id: Number(row.id), hall: row.hall, event: row.event });
    }
    return { last, events };
  }

  /** Drops the events every hall has had time to relay, and other rows no hall needs any more. */
  async pruneEvents(): Promise<void> {
    await this.pool.query(`DELETE FROM raider_hall_events WHERE cluster = $1 AND at < now() - interval '${EVENTS_KEEP}'`, [this.cluster]);
    await this.pool.query('DELETE FROM raider_hall_run_ids WHERE cluster = $1 AND sec < $2', [
      this.cluster,
      Math.floor(Date.now() / 1000) - 86_400,
    ]);
    await this.faces.prune();
    await this.outputs.prune();
    await this.journals.prune();
    await this.questions.prune();
  }

  async halls(): Promise<ClusterHall[]> {
    const result = await this.pool.query(HALLS, [this.cluster]);
    return result.rows.map((raw) => {
      const row = hallRow.parse(raw);
      return {
        ...row,
        started_at: Math.round(row.started_at),
        lease_age: tenths(row.lease_age),
        lease_left: tenths(row.lease_left),
      };
    });
  }

  async queued(): Promise<QueuedMission[]> {
    const result = await this.pool.query(
      `SELECT queue_kind, queue_key, CASE WHEN state = 'claimed' THEN hall END AS hall, entry FROM raider_hall_missions
       WHERE cluster = $1 ORDER BY queue_kind DESC, queue_key, seq, id`,
      [this.cluster],
    );
    return result.rows.flatMap((raw): QueuedMission[] => {
      const row = queuedRow.parse(raw);
      const entry = missionSchema.safeParse(row.entry);
      if (!entry.success) return [];
      const queue: QueuedMission['queue'] =
        row.queue_kind === 'slot' ? { kind: 'slot', slot: row.queue_key } : { kind: 'binding', binding: row.queue_key };
      return [{ queue, entry: entry.data, hall: row.hall }];
    });
  }

  async remoteRuns(): Promise<RemoteRun[]> {
    const result = await this.pool.query(
      'SELECT hall, record FROM raider_hall_runs WHERE cluster = $1 AND hall <> $2 AND pid IS NOT NULL',
      [this.cluster, this.hallId],
    );
    return result.rows.flatMap((raw) => {
      const row = lostRow.parse(raw);
      const run = ledgerRunSchema.safeParse(row.record);
      return run.success ? [{ hall: row.hall, run: run.data }] : [];
    });
  }

  async remoteRun(id: string): Promise<RemoteRun | null> {
    const result = await this.pool.query(
      'SELECT hall, record FROM raider_hall_runs WHERE cluster = $1 AND id = $2 AND hall <> $3 AND pid IS NOT NULL',
      [this.cluster, id, this.hallId],
    );
    if (result.rows.length === 0) return null;
    const row = lostRow.parse(result.rows[0]);
    const run = ledgerRunSchema.safeParse(row.record);
    return run.success ? { hall: row.hall, run: run.data } : null;
  }

  async signal(id: string, signal: 'cancel' | 'kill'): Promise<RemoteSignal> {
    const channel = PostgresSharedQueue.channel(this.cluster);
    const sent = await this.pool.query<{ hall: string }>(
      `WITH owner AS (SELECT hall FROM raider_hall_runs WHERE cluster = $1 AND id = $2),
         sent AS (INSERT INTO raider_hall_signals (cluster, hall, run_id, signal) SELECT $1, hall, $2, $3 FROM owner RETURNING hall)
       SELECT hall, pg_notify($4, '') FROM sent`,
      [this.cluster, id, signal, channel],
    );
    const hall = sent.rows[0]?.hall;
    if (hall !== undefined) return { kind: 'run', hall };
    if (signal === 'kill') return { kind: 'unknown' };
    // A waiting mission, by its id: dropped from the cluster's queue unless a hall already claimed it.
    const dropped = await this.pool.query(
      `WITH gone AS (DELETE FROM raider_hall_missions WHERE cluster = $1 AND id = $2 AND state = 'waiting' RETURNING entry)
       SELECT entry, pg_notify($3, '') FROM gone`,
      [this.cluster, id, channel],
    );
    const entry = missionSchema.safeParse(dropped.rows[0]?.entry);
    return entry.success ? { kind: 'dropped', entry: entry.data } : { kind: 'unknown' };
  }

  async front(id: string): Promise<{ entry: Mission; binding?: string; from: number } | null> {
    const result = await this.pool.query(FRONT, [this.cluster, id]);
    if (result.rows.length === 0) return null;
    const row = frontRow.parse(result.rows[0]);
    const entry = missionSchema.safeParse(row.entry);
    if (!entry.success) throw new Error(`the waiting mission ${id} in the database is not readable: ${z.prettifyError(entry.error)}`);
    return { entry: entry.data, ...(row.queue_kind === 'binding' ? { binding: row.queue_key } : {}), from: row.place };
  }

  async takeSignals(): Promise<Array<{ runId: string; signal: 'cancel' | 'kill' }>> {
    const taken = await this.pool.query<{ run_id: string; signal: string }>(
      'DELETE FROM raider_hall_signals WHERE cluster = $1 AND hall = $2 RETURNING run_id, signal, id',
      [this.cluster, this.hallId],
    );
    return taken.rows.map((r) => ({ runId: r.run_id, signal: r.signal === 'kill' ? 'kill' : 'cancel' }));
  }

  async stillHeld(runIds: readonly string[]): Promise<Set<string>> {
    if (runIds.length === 0) return new Set();
    const result = await this.pool.query<{ id: string }>(
      'SELECT id FROM raider_hall_runs WHERE cluster = $1 AND hall = $2 AND id = ANY($3)',
      [this.cluster, this.hallId, [...runIds]],
    );
    return new Set(result.rows.map((r) => r.id));
  }

  onDoorbell(listener: () => void): void {
    this.doorbells.push(listener);
    // One LISTEN connection for all listeners: a second listener added while the first connects must not open another.
    if (!this.listening) {
      this.listening = true;
      void this.listen();
    }
  }

  onReplaced(listener: () => void): void {
    this.replacedListeners.push(listener);
  }

  /** The store found this hall's lease gone at a renewal. */
  replaced(): void {
    for (const listener of this.replacedListeners) listener();
  }

  onRunsRefused(listener: (runIds: readonly string[]) => void): void {
    this.refusedListeners.push(listener);
  }

  /** The store's commit found these runs' claims gone: told before the runs hear that their records are written. */
  runsRefused(runIds: readonly string[]): void {
    for (const listener of this.refusedListeners) listener(runIds);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.listenTimer) clearTimeout(this.listenTimer);
    const client = this.listener;
    this.listener = null;
    await client?.end().catch(() => undefined);
  }

  /** LISTEN on a connection of its own (a pooled one would drop it); retried while the database is away. */
  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client(this.connection);
    const retry = () => {
      if (this.closed || this.listenTimer !== null) return;
      if (this.listener === client) this.listener = null;
      client.end().catch(() => undefined);
      this.listenTimer = setTimeout(() => {
        this.listenTimer = null;
        void this.listen();
      }, LISTEN_RETRY_MS);
      this.listenTimer.unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', () => {
      for (const ring of this.doorbells) ring();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(PostgresSharedQueue.channel(this.cluster))}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.listener = client;
      // Whatever rang while no one listened: look now.
      for (const ring of this.doorbells) ring();
    } catch {
      retry();
    }
  }
}

function tenths(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
