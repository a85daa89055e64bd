/**
 * Claiming the heads of the cluster's queues: a hall takes, while it has
 * room, the missions whose serial slot and binding are free, with
 * `FOR UPDATE SKIP LOCKED`, and reserves each a run id unique in the cluster.
 */
import { z } from 'zod';
import { slotOf } from '../../../../domain/names.js';
import { formatRunId } from '../../../../domain/run-id.js';
import type { ClaimedMission } from '../../../../ports/cluster-queue.js';
import { missionSchema } from '../load-state.js';
import type { ClusterScope } from './scope.js';
import { AGENT_SESSIONS_NS, AgentSessionRecord } from '../../../../protocol/agent-session.js';

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
  (SELECT s.session FROM raider_hall_sessions s WHERE s.cluster = u.cluster AND s.binding = u.binding) AS session,
  (SELECT k.value FROM raider_hall_sessions s JOIN raider_hall_kv k ON k.cluster = s.cluster AND k.ns = $4 AND k.key = s.session
   WHERE s.cluster = u.cluster AND s.binding = u.binding) AS agent_session`;

const RESERVE_RUN_ID = `INSERT INTO raider_hall_run_ids (cluster, slot, sec, n) VALUES ($1, $2, $3, 1)
ON CONFLICT (cluster, slot, sec) DO UPDATE SET n = raider_hall_run_ids.n + 1 RETURNING n`;

const claimRow = z.object({
  seq: z.union([z.string(), z.number()]),
  entry: z.unknown(),
  session: z.string().nullable(),
  // A record that does not read as one is no record: the binding's next run starts a new agent session.
  agent_session: AgentSessionRecord.nullable().catch(null),
});

export async function claimMissions(scope: ClusterScope, limit: number): Promise<ClaimedMission[]> {
  if (limit <= 0) return [];
  const result = await scope.pool.query(CLAIM, [scope.cluster, scope.hallId, limit, AGENT_SESSIONS_NS]);
  const rows = result.rows.map((raw) => claimRow.parse(raw)).sort((a, b) => Number(a.seq) - Number(b.seq));
  const claimed: ClaimedMission[] = [];
  for (const row of rows) {
    const entry = missionSchema.safeParse(row.entry);
    if (!entry.success) {
      scope.warn(
        `a claimed mission in the database is not readable (${z.prettifyError(entry.error)}); it stays claimed by ${scope.hallId}`,
      );
      continue;
    }
    const at = Date.now();
    const runId = await reserveRunId(scope, slotOf(entry.data.name).slot, at);
    claimed.push({
      entry: entry.data,
      runId,
      at,
      ...(row.session !== null ? { session: row.session, ...(row.agent_session !== null ? { agentSession: row.agent_session } : {}) } : {}),
    });
  }
  return claimed;
}

/** The next free `SLOT-TIME[.N]` of the cluster for a run started at `at`. */
async function reserveRunId(scope: ClusterScope, slot: string, at: number): Promise<string> {
  const sec = Math.floor(at / 1000);
  const result = await scope.pool.query<{ n: number }>(RESERVE_RUN_ID, [scope.cluster, slot, sec]);
  return formatRunId(slot, { sec, n: result.rows[0]?.n ?? 1 });
}

/** Reserved run ids of seconds long past leave the table (a day keeps every claim's second). */
export async function pruneRunIds(scope: ClusterScope): Promise<void> {
  await scope.pool.query('DELETE FROM raider_hall_run_ids WHERE cluster = $1 AND sec < $2', [
    scope.cluster,
    Math.floor(Date.now() / 1000) - 86_400,
  ]);
}
