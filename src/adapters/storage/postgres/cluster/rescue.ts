/**
 * Taking over lost halls: a hall whose lease expired is deleted with its
 * runs in one transaction, its claimed missions wait again, and each of its
 * runs is reported once, in the cluster's events.
 */
import { z } from 'zod';
import type { BusEvent } from '../../../../machines/hall-effects.js';
import type { LostRun } from '../../../../ports/cluster-queue.js';
import { ledgerRunSchema } from '../load-state.js';
import { ONE_END_PER_RUN } from './events.js';
import { type ClusterScope, clusterChannel, heldRunRow } from './scope.js';

/** The missions the halls `$2` claimed and did not start wait again, for any hall, in their places (their seq). */
export const RELEASE_CLAIMS =
  "UPDATE raider_hall_missions SET state = 'waiting', hall = NULL, claimed_at = NULL WHERE cluster = $1 AND state = 'claimed' AND hall = ANY($2)";

/** A lost run's session for its binding, unless the binding has one; only when the cluster has its journal. */
const BIND_LOST_SESSION = `INSERT INTO raider_hall_sessions (cluster, binding, session)
SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM raider_hall_journal_chunks WHERE cluster = $1 AND session = $3)
ON CONFLICT (cluster, binding) DO NOTHING`;

export async function rescueLostHalls(scope: ClusterScope, report: (lost: LostRun) => BusEvent): Promise<LostRun[]> {
  const { pool, cluster, hallId } = scope;
  const expired = await pool.query('SELECT 1 FROM raider_hall_halls WHERE cluster = $1 AND id <> $2 AND lease_until < now() LIMIT 1', [
    cluster,
    hallId,
  ]);
  if (expired.rowCount === 0) return [];
  const db = await pool.connect();
  try {
    await db.query('BEGIN');
    // One rescuer at a time per cluster; the DELETE ... RETURNING below makes each report happen once.
    await db.query("SELECT pg_advisory_xact_lock(hashtext('raider-hall:rescue:' || $1))", [cluster]);
    const halls = await db.query<{ id: string }>(
      'DELETE FROM raider_hall_halls WHERE cluster = $1 AND id <> $2 AND lease_until < now() RETURNING id',
      [cluster, hallId],
    );
    const lost = halls.rows.map((r) => r.id);
    let runs: LostRun[] = [];
    if (lost.length > 0) {
      // Back to the head of their queues: they keep their seq.
      await db.query(RELEASE_CLAIMS, [cluster, lost]);
      const deleted = await db.query('DELETE FROM raider_hall_runs WHERE cluster = $1 AND hall = ANY($2) RETURNING hall, record', [
        cluster,
        lost,
      ]);
      runs = deleted.rows.flatMap((raw) => {
        const row = heldRunRow.parse(raw);
        const run = ledgerRunSchema.safeParse(row.record);
        if (run.success) return [{ run: run.data, hall: row.hall }];
        scope.warn(`a run of the lost hall ${row.hall} is not readable (${z.prettifyError(run.error)}); dropped`);
        return [];
      });
      // A session a lost run created and whose binding was not recorded yet (the hall was lost in the
      // moment between its raider's start and that record) stays its binding's, when its journal is here.
      for (const { run } of runs) {
        if (run.binding === undefined || run.session === undefined) continue;
        await db.query(BIND_LOST_SESSION, [cluster, run.binding, run.session]);
      }
      // The reports, naming the lost hall, are committed with the takeover or not at all; the other
      // halls relay them from the table (written as this hall's: the lost one, back, relays them too).
      for (const lost of runs) {
        await db.query(`INSERT INTO raider_hall_events (cluster, hall, event) VALUES ($1, $2, $3::jsonb) ${ONE_END_PER_RUN}`, [
          cluster,
          hallId,
          JSON.stringify({ ...report(lost), hall: lost.hall }),
        ]);
      }
      await db.query('SELECT pg_notify($1, $2)', [clusterChannel(cluster), '']);
    }
    await db.query('COMMIT');
    db.release();
    for (const hall of lost)
      scope.warn(`took over the lost hall ${hall} (its lease expired): ${runs.filter((r) => r.hall === hall).length} runs reported failed`);
    return runs;
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined);
    db.release(true);
    throw err;
  }
}

/** Which of these runs the cluster still holds as this hall's (a takeover deletes a lost hall's runs). */
export async function stillHeld(scope: ClusterScope, runIds: readonly string[]): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const result = await scope.pool.query<{ id: string }>(
    'SELECT id FROM raider_hall_runs WHERE cluster = $1 AND hall = $2 AND id = ANY($3)',
    [scope.cluster, scope.hallId, [...runIds]],
  );
  return new Set(result.rows.map((r) => r.id));
}
