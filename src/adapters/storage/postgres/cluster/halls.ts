/**
 * Membership: the halls of the cluster, each with its lease (renewed by its
 * store, docs/cluster.md) and how many runs it holds, for the dashboard.
 */
import { z } from 'zod';
import type { ClusterHall } from '../../../../ports/cluster-queue.js';
import type { ClusterScope } from './scope.js';

/** Every hall of the cluster with its lease's age and time left, and its runs. */
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

export async function clusterHalls(scope: ClusterScope): Promise<ClusterHall[]> {
  const result = await scope.pool.query(HALLS, [scope.cluster]);
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

function tenths(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
