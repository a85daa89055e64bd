/**
 * The event relay: each hall writes its events to `raider_hall_events` and
 * relays the other halls' from there, read in pages by id.
 */
import { z } from 'zod';
import type { BusEvent } from '../../../../machines/hall-effects.js';
import { isBusEvent } from '../../../../protocol/events.js';
import type { ClusterEvent } from '../../../../ports/cluster-queue.js';
import { type ClusterScope, clusterChannel } from './scope.js';

/** Events older than this leave the table (a hall relays what came since it started, read every half second). */
const EVENTS_KEEP = '10 minutes';
/** At most this many events per read: a hall that fell behind catches up over a few reads. */
const EVENTS_PAGE = 500;

/**
 * A run ends once in the cluster (migration 005): a later `raider.done` of the same run (a stalled hall's own
 * end after a takeover reported the run lost, or a report written back) is not written.
 */
export const ONE_END_PER_RUN =
  "ON CONFLICT (cluster, (event->>'id'), (coalesce(event->>'mission_id', ''))) WHERE event->>'type' = 'raider.done' DO NOTHING";

const eventRow = z.object({ id: z.union([z.string(), z.number()]), hall: z.string(), event: z.unknown() });

export async function shareEvents(scope: ClusterScope, events: readonly BusEvent[]): Promise<void> {
  if (events.length === 0) return;
  await scope.pool.query(
    `WITH written AS (
       INSERT INTO raider_hall_events (cluster, hall, event) SELECT $1, $2, e FROM unnest($3::jsonb[]) AS e
       ${ONE_END_PER_RUN} RETURNING 1)
     SELECT pg_notify($4, '') FROM (SELECT 1 FROM written LIMIT 1) AS any_written`,
    [scope.cluster, scope.hallId, events.map((e) => JSON.stringify(e)), clusterChannel(scope.cluster)],
  );
}

export async function eventsSince(scope: ClusterScope, afterId: number | null): Promise<{ last: number; events: ClusterEvent[] }> {
  if (afterId === null) {
    const last = await scope.pool.query<{ last: string | null }>(
      'SELECT max(id)::text AS last FROM raider_hall_events WHERE cluster = $1',
      [scope.cluster],
    );
    return { last: Number(last.rows[0]?.last ?? 0), events: [] };
  }
  const result = await scope.pool.query(
    'SELECT id, hall, event FROM raider_hall_events WHERE cluster = $1 AND id > $2 ORDER BY id LIMIT $3',
    [scope.cluster, afterId, EVENTS_PAGE],
  );
  let last = afterId;
  const events: ClusterEvent[] = [];
  for (const raw of result.rows) {
    const row = eventRow.parse(raw);
    last = Math.max(last, Number(row.id));
    // An event this hall's protocol does not know (a newer hall's) is not relayed: its subscribers could not read it.
    if (row.hall !== scope.hallId && isBusEvent(row.event)) events.push({ id: Number(row.id), hall: row.hall, event: row.event });
  }
  return { last, events };
}

/** Drops the events every hall has had time to relay. */
export async function pruneEvents(scope: ClusterScope): Promise<void> {
  await scope.pool.query(`DELETE FROM raider_hall_events WHERE cluster = $1 AND at < now() - interval '${EVENTS_KEEP}'`, [scope.cluster]);
}
