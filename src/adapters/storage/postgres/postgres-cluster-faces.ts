/**
 * The cluster's answers to the cron and Telegram faces of a shared hall
 * (docs/cluster.md): cron occurrences are claimed by inserting
 * `(cluster, job, slot)`, first insert wins, so no leader is needed; a bot's
 * poll loop is a role in `raider_hall_roles`, held while its hall's lease
 * lives and taken by another hall once it has expired; the bot's offset is
 * written only by the hall that holds the role.
 */
import type pg from 'pg';
import type { ClusterFaces } from '../../../ports/cluster-faces.js';

/** Occurrences older than this leave the table; each job's newest stays (a starting hall plans from it). */
const FIRES_KEEP = '1 hour';

const CLAIM_SLOT = `INSERT INTO raider_hall_cron_fires AS f (cluster, job, slot, hall) VALUES ($1, $2, $3::timestamptz, $4)
ON CONFLICT (cluster, job, slot) DO UPDATE SET at = f.at WHERE f.hall = EXCLUDED.hall
RETURNING f.hall`;

/**
 * Takes the role when no live hall holds it, keeps it when this hall does; a
 * row comes back only when this hall holds it now, and only while its own
 * lease lives (a hall the cluster took for lost holds nothing). Two halls
 * taking over at once: ON CONFLICT locks the row and checks the second
 * against the first one's update.
 */
const HOLD_ROLE = `WITH me AS (
  SELECT EXISTS (SELECT 1 FROM raider_hall_halls WHERE cluster = $1 AND id = $3 AND lease_until > now()) AS alive
)
INSERT INTO raider_hall_roles AS r (cluster, role, hall) SELECT $1, $2, $3 FROM me WHERE me.alive
ON CONFLICT (cluster, role) DO UPDATE SET hall = EXCLUDED.hall, since = CASE WHEN r.hall = EXCLUDED.hall THEN r.since ELSE now() END
WHERE r.hall = EXCLUDED.hall OR NOT EXISTS (
  SELECT 1 FROM raider_hall_halls h WHERE h.cluster = r.cluster AND h.id = r.hall AND h.lease_until > now())
RETURNING r.hall`;

const WRITE_HOLDING = `INSERT INTO raider_hall_kv (cluster, ns, key, value)
SELECT $1, $3, $4, $5::jsonb WHERE EXISTS (SELECT 1 FROM raider_hall_roles WHERE cluster = $1 AND role = $2 AND hall = $6)
ON CONFLICT (cluster, ns, key) DO UPDATE SET value = EXCLUDED.value`;

export class PostgresClusterFaces implements ClusterFaces {
  constructor(
    private readonly pool: pg.Pool,
    private readonly cluster: string,
    private readonly hallId: string,
  ) {}

  async claimCronSlot(job: string, slotMs: number): Promise<boolean> {
    const won = await this.pool.query(CLAIM_SLOT, [this.cluster, job, new Date(slotMs).toISOString(), this.hallId]);
    return won.rowCount === 1;
  }

  async lastCronSlot(job: string): Promise<number | null> {
    const result = await this.pool.query<{ ms: string | null }>(
      'SELECT (extract(epoch FROM max(slot)) * 1000)::bigint::text AS ms FROM raider_hall_cron_fires WHERE cluster = $1 AND job = $2',
      [this.cluster, job],
    );
    const ms = result.rows[0]?.ms;
    return ms === null || ms === undefined ? null : Number(ms);
  }

  bindingBusy(binding: string): Promise<boolean> {
    return this.found(
      `SELECT EXISTS (SELECT 1 FROM raider_hall_missions WHERE cluster = $1 AND binding = $2)
           OR EXISTS (SELECT 1 FROM raider_hall_runs WHERE cluster = $1 AND binding = $2) AS found`,
      binding,
    );
  }

  async busyBindings(prefix: string): Promise<string[]> {
    const result = await this.pool.query<{ binding: string }>(
      `SELECT binding FROM raider_hall_missions WHERE cluster = $1 AND left(binding, length($2)) = $2
       UNION SELECT binding FROM raider_hall_runs WHERE cluster = $1 AND left(binding, length($2)) = $2`,
      [this.cluster, prefix],
    );
    return result.rows.map((row) => row.binding);
  }

  missionKnown(missionId: string): Promise<boolean> {
    return this.found(
      `SELECT EXISTS (SELECT 1 FROM raider_hall_missions WHERE cluster = $1 AND id = $2)
           OR EXISTS (SELECT 1 FROM raider_hall_runs WHERE cluster = $1 AND mission_id = $2) AS found`,
      missionId,
    );
  }

  /** The `found` column of a query asked of this cluster ($1) about one value ($2). */
  private async found(sql: string, value: string): Promise<boolean> {
    const result = await this.pool.query<{ found: boolean }>(sql, [this.cluster, value]);
    return result.rows[0]?.found === true;
  }

  async holdRole(role: string): Promise<boolean> {
    const held = await this.pool.query(HOLD_ROLE, [this.cluster, role, this.hallId]);
    return held.rowCount === 1;
  }

  async readFact(ns: string, key: string): Promise<unknown> {
    const result = await this.pool.query<{ value: unknown }>(
      'SELECT value FROM raider_hall_kv WHERE cluster = $1 AND ns = $2 AND key = $3',
      [this.cluster, ns, key],
    );
    return result.rows[0]?.value;
  }

  async writeFactHolding(role: string, ns: string, key: string, value: unknown): Promise<boolean> {
    const written = await this.pool.query(WRITE_HOLDING, [this.cluster, role, ns, key, JSON.stringify(value ?? null), this.hallId]);
    return written.rowCount === 1;
  }

  /** Drops occurrences no hall will ask about again, keeping each job's newest. */
  async prune(): Promise<void> {
    await this.pool.query(
      `DELETE FROM raider_hall_cron_fires f WHERE f.cluster = $1 AND f.slot < now() - interval '${FIRES_KEEP}'
         AND f.slot < (SELECT max(g.slot) FROM raider_hall_cron_fires g WHERE g.cluster = f.cluster AND g.job = f.job)`,
      [this.cluster],
    );
  }
}
