/** The missions waiting in the cluster's queue: listed, or one moved to the front of its queue. */
import { z } from 'zod';
import type { Mission } from '../../../../domain/mission.js';
import type { QueuedMission } from '../../../../ports/cluster-queue.js';
import { missionSchema } from '../load-state.js';
import type { ClusterScope } from './scope.js';

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

const QUEUED = `SELECT queue_kind, queue_key, CASE WHEN state = 'claimed' THEN hall END AS hall, entry FROM raider_hall_missions
WHERE cluster = $1 ORDER BY queue_kind DESC, queue_key, seq, id`;

const frontRow = z.object({ entry: z.unknown(), queue_kind: z.string(), queue_key: z.string(), place: z.number() });
const queuedRow = z.object({
  queue_kind: z.enum(['slot', 'binding']),
  queue_key: z.string(),
  hall: z.string().nullable(),
  entry: z.unknown(),
});

export async function queuedMissions(scope: ClusterScope): Promise<QueuedMission[]> {
  const result = await scope.pool.query(QUEUED, [scope.cluster]);
  return result.rows.flatMap((raw): QueuedMission[] => {
    const row = queuedRow.parse(raw);
    const entry = missionSchema.safeParse(row.entry);
    if (!entry.success) return [];
    const queue: QueuedMission['queue'] =
      row.queue_kind === 'slot' ? { kind: 'slot', slot: row.queue_key } : { kind: 'binding', binding: row.queue_key };
    return [{ queue, entry: entry.data, hall: row.hall }];
  });
}

export async function frontMission(scope: ClusterScope, id: string): Promise<{ entry: Mission; binding?: string; from: number } | null> {
  const result = await scope.pool.query(FRONT, [scope.cluster, id]);
  if (result.rows.length === 0) return null;
  const row = frontRow.parse(result.rows[0]);
  const entry = missionSchema.safeParse(row.entry);
  if (!entry.success) throw new Error(`the waiting mission ${id} in the database is not readable: ${z.prettifyError(entry.error)}`);
  return { entry: entry.data, ...(row.queue_kind === 'binding' ? { binding: row.queue_key } : {}), from: row.place };
}
