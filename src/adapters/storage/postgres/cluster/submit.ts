/**
 * Submitting missions to the cluster's queue, `raider_hall_missions`, with
 * group commit: missions submitted while a batch is on its way go together
 * in the next one, so a burst costs a few round trips and one connection.
 */
import { escapeLiteral } from 'pg';
import type pg from 'pg';
import { z } from 'zod';
import type { Mission } from '../../../../domain/mission.js';
import { inline, missionKeys } from '../op-statements.js';
import { type ClusterScope, clusterChannel } from './scope.js';

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

const depthRow = z.object({ depth_of: z.string(), depth: z.number() });

interface PendingSubmission {
  entry: Mission;
  resolve: (queued: { depth: number }) => void;
  reject: (err: Error) => void;
}

export class ClusterSubmissions {
  private submissions: PendingSubmission[] = [];
  private submitting = false;

  constructor(private readonly scope: Pick<ClusterScope, 'pool' | 'cluster'>) {}

  /** Queues the mission in the cluster; resolves once its row is committed. */
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
    const { cluster } = this.scope;
    const lines = ['BEGIN'];
    for (const { entry } of batch) {
      const keys = missionKeys(entry);
      const [kind, key] =
        keys.serialSlot !== null ? ['slot', keys.serialSlot] : keys.binding !== null ? ['binding', keys.binding] : ['slot', entry.name];
      lines.push(inline({ text: SUBMIT, values: [cluster, entry.id, kind, key, JSON.stringify(entry), keys.serialSlot, keys.binding] }));
    }
    const depths = batch.length === 1 ? DEPTH_OF_ONE : DEPTHS;
    lines.push(inline({ text: depths, values: [cluster, batch.map(({ entry }) => entry.id)] }));
    lines.push(`SELECT pg_notify(${escapeLiteral(clusterChannel(cluster))}, '')`);
    lines.push('COMMIT');
    let db: pg.PoolClient | null = null;
    try {
      db = await this.scope.pool.connect();
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
}
