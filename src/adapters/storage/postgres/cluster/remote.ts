/**
 * Remote control: the runs other halls hold, and the cancels and kills sent
 * to them through `raider_hall_signals` (the owner takes its own).
 */
import type { RemoteRun, RemoteSignal } from '../../../../ports/cluster-queue.js';
import { ledgerRunSchema, missionSchema } from '../load-state.js';
import { type ClusterScope, clusterChannel, heldRunRow } from './scope.js';

const SEND_SIGNAL = `WITH owner AS (SELECT hall FROM raider_hall_runs WHERE cluster = $1 AND id = $2),
  sent AS (INSERT INTO raider_hall_signals (cluster, hall, run_id, signal) SELECT $1, hall, $2, $3 FROM owner RETURNING hall)
SELECT hall, pg_notify($4, '') FROM sent`;

const DROP_WAITING = `WITH gone AS (DELETE FROM raider_hall_missions WHERE cluster = $1 AND id = $2 AND state = 'waiting' RETURNING entry)
SELECT entry, pg_notify($3, '') FROM gone`;

export async function remoteRuns(scope: ClusterScope): Promise<RemoteRun[]> {
  const result = await scope.pool.query('SELECT hall, record FROM raider_hall_runs WHERE cluster = $1 AND hall <> $2 AND pid IS NOT NULL', [
    scope.cluster,
    scope.hallId,
  ]);
  return result.rows.flatMap((raw) => {
    const row = heldRunRow.parse(raw);
    const run = ledgerRunSchema.safeParse(row.record);
    return run.success ? [{ hall: row.hall, run: run.data }] : [];
  });
}

export async function remoteRun(scope: ClusterScope, id: string): Promise<RemoteRun | null> {
  const result = await scope.pool.query(
    'SELECT hall, record FROM raider_hall_runs WHERE cluster = $1 AND id = $2 AND hall <> $3 AND pid IS NOT NULL',
    [scope.cluster, id, scope.hallId],
  );
  if (result.rows.length === 0) return null;
  const row = heldRunRow.parse(result.rows[0]);
  const run = ledgerRunSchema.safeParse(row.record);
  return run.success ? { hall: row.hall, run: run.data } : null;
}

export async function sendSignal(scope: ClusterScope, id: string, signal: 'cancel' | 'kill'): Promise<RemoteSignal> {
  const channel = clusterChannel(scope.cluster);
  const sent = await scope.pool.query<{ hall: string }>(SEND_SIGNAL, [scope.cluster, id, signal, channel]);
  const hall = sent.rows[0]?.hall;
  if (hall !== undefined) return { kind: 'run', hall };
  if (signal === 'kill') return { kind: 'unknown' };
  // A waiting mission, by its id: dropped from the cluster's queue unless a hall already claimed it.
  const dropped = await scope.pool.query(DROP_WAITING, [scope.cluster, id, channel]);
  const entry = missionSchema.safeParse(dropped.rows[0]?.entry);
  return entry.success ? { kind: 'dropped', entry: entry.data } : { kind: 'unknown' };
}

export async function takeSignals(scope: ClusterScope): Promise<Array<{ runId: string; signal: 'cancel' | 'kill' }>> {
  const taken = await scope.pool.query<{ run_id: string; signal: string }>(
    'DELETE FROM raider_hall_signals WHERE cluster = $1 AND hall = $2 RETURNING run_id, signal, id',
    [scope.cluster, scope.hallId],
  );
  return taken.rows.map((r) => ({ runId: r.run_id, signal: r.signal === 'kill' ? 'kill' : 'cancel' }));
}
