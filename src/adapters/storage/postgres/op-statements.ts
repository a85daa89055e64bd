/**
 * Each durable operation as the few SQL statements that make it so in the
 * tables: one insert, update or delete per row touched, never a rewrite of
 * a queue. Every statement is idempotent (an upsert, a delete, an update to
 * a value), so a batch whose COMMIT went unanswered can be sent again.
 *
 * A batch goes as one script (BEGIN, the statements, COMMIT) with its values
 * inlined by the driver's escaping: one round trip per group commit instead
 * of one per statement.
 */
import { escapeLiteral } from 'pg';
import type { Mission } from '../../../domain/mission.js';
import { effectiveBinding, slotOf } from '../../../domain/names.js';
import { KV_NAMESPACE, type DurableOp } from '../../../ports/durable-state.js';

export interface Statement {
  text: string;
  values: unknown[];
}

/** Whose rows: the cluster, and the hall that owns the runs it starts. */
export interface StoreScope {
  cluster: string;
  hallId: string;
  /** The channel that tells a shared cluster's halls a slot or binding may be free (null: one hall alone). */
  doorbell: string | null;
}

/** Which serial slot (a numbered one) and which binding a mission holds while it runs: the claim's keys. */
export function missionKeys(entry: Mission): { serialSlot: string | null; binding: string | null } {
  const { slot, singleton } = slotOf(entry.name);
  return { serialSlot: singleton ? slot : null, binding: effectiveBinding(slot, entry.binding) ?? null };
}

// A mission moved to another queue goes to its tail (a new seq); queued again
// in the queue it waits in, it keeps its place, as in DurableState.
const QUEUE = `INSERT INTO raider_hall_missions (cluster, id, queue_kind, queue_key, seq, entry, serial_slot, binding)
VALUES ($1, $2, $3, $4, nextval('raider_hall_mission_seq'), $5::jsonb, $6, $7)
ON CONFLICT (cluster, id) DO UPDATE
SET queue_kind = EXCLUDED.queue_kind, queue_key = EXCLUDED.queue_key, seq = EXCLUDED.seq, entry = EXCLUDED.entry
WHERE (raider_hall_missions.queue_kind, raider_hall_missions.queue_key) IS DISTINCT FROM (EXCLUDED.queue_kind, EXCLUDED.queue_key)`;
const REMOVE = 'DELETE FROM raider_hall_missions WHERE cluster = $1 AND id = $2';
// To the head of its own queue: one less than the queue's smallest seq (seqs may go below 1).
// Only when it is not the head already, so sending it again changes nothing.
const FRONT = `UPDATE raider_hall_missions AS m SET seq = q.head - 1
FROM (SELECT min(o.seq) AS head FROM raider_hall_missions AS o JOIN raider_hall_missions AS me
  ON me.cluster = o.cluster AND me.queue_kind = o.queue_kind AND me.queue_key = o.queue_key
  WHERE me.cluster = $1 AND me.id = $2) AS q
WHERE m.cluster = $1 AND m.id = $2 AND m.seq > q.head`;
const RUN = `INSERT INTO raider_hall_runs (cluster, id, hall, slot, binding, mission_id, pid, record)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
ON CONFLICT (cluster, id) DO UPDATE SET hall = EXCLUDED.hall, pid = EXCLUDED.pid, record = EXCLUDED.record`;
const PID = `UPDATE raider_hall_runs SET pid = $3, record = jsonb_set(record, '{pid}', to_jsonb($3::integer))
WHERE cluster = $1 AND id = $2`;
const END = 'DELETE FROM raider_hall_runs WHERE cluster = $1 AND id = $2';

// A hall of a shared cluster touches only what it holds. Another hall may have taken this one for lost
// (a stall longer than its lease), put its claims back to waiting and claimed them itself meanwhile:
// a mission row is removed only while this hall's claim holds it, and nothing here ever inserts one.
const SHARED_REMOVE = "DELETE FROM raider_hall_missions WHERE cluster = $1 AND id = $2 AND state = 'claimed' AND hall = $3";
/**
 * A claimed mission becomes a run only while this hall still holds its claim: the claim's row goes
 * and the run's row comes in one statement, or neither. Sent again after an unanswered COMMIT, it
 * finds its own run row and changes nothing. A run refused here is not started (see refusedRuns).
 */
const SHARED_RUN = `WITH claim AS (
  DELETE FROM raider_hall_missions WHERE cluster = $1 AND id = $6 AND state = 'claimed' AND hall = $3 RETURNING 1
)
INSERT INTO raider_hall_runs (cluster, id, hall, slot, binding, mission_id, pid, record)
SELECT $1, $2, $3, $4, $5, $6, $7, $8::jsonb
WHERE EXISTS (SELECT 1 FROM claim) OR EXISTS (SELECT 1 FROM raider_hall_runs WHERE cluster = $1 AND id = $2 AND hall = $3)
ON CONFLICT (cluster, id) DO UPDATE SET pid = EXCLUDED.pid, record = EXCLUDED.record WHERE raider_hall_runs.hall = EXCLUDED.hall`;
const SHARED_PID = `UPDATE raider_hall_runs SET pid = $3, record = jsonb_set(record, '{pid}', to_jsonb($3::integer))
WHERE cluster = $1 AND id = $2 AND hall = $4`;
const SHARED_END = 'DELETE FROM raider_hall_runs WHERE cluster = $1 AND id = $2 AND hall = $3';
const BIND = `INSERT INTO raider_hall_sessions (cluster, binding, session) VALUES ($1, $2, $3)
ON CONFLICT (cluster, binding) DO UPDATE SET session = EXCLUDED.session, updated_at = now()
WHERE raider_hall_sessions.session IS DISTINCT FROM EXCLUDED.session`;
const UNBIND = 'DELETE FROM raider_hall_sessions WHERE cluster = $1 AND binding = $2';
const SET = `INSERT INTO raider_hall_kv (cluster, ns, key, value) VALUES ($1, $2, $3, $4::jsonb)
ON CONFLICT (cluster, ns, key) DO UPDATE SET value = EXCLUDED.value`;
const UNSET = 'DELETE FROM raider_hall_kv WHERE cluster = $1 AND ns = $2 AND key = $3';

export function opStatements(op: DurableOp, scope: StoreScope): Statement[] {
  return scope.doorbell !== null ? sharedStatements(op, scope) : aloneStatements(op, scope);
}

/** A hall of a shared cluster: its missions are rows it claimed, its runs rows it holds. */
function sharedStatements(op: DurableOp, scope: StoreScope): Statement[] {
  const { cluster, hallId } = scope;
  switch (op.op) {
    case 'queue':
      // A claimed mission waiting here for its slot or binding keeps its claimed row as it is.
      return [];
    case 'remove':
      return [{ text: SHARED_REMOVE, values: [cluster, op.missionId, hallId] }];
    case 'run': {
      const run = op.run;
      return [
        {
          text: SHARED_RUN,
          values: [cluster, run.id, hallId, run.slot, run.binding ?? null, run.entry.id, run.pid ?? null, JSON.stringify(run)],
        },
      ];
    }
    case 'pid':
      return [{ text: SHARED_PID, values: [cluster, op.runId, op.pid, hallId] }];
    case 'end':
      return [{ text: SHARED_END, values: [cluster, op.runId, hallId] }];
    default:
      return aloneStatements(op, scope);
  }
}

function aloneStatements(op: DurableOp, scope: StoreScope): Statement[] {
  const { cluster } = scope;
  switch (op.op) {
    case 'queue': {
      const [kind, key] = op.queue.kind === 'slot' ? ['slot', op.queue.slot] : ['binding', op.queue.binding];
      const keys = missionKeys(op.entry);
      return [{ text: QUEUE, values: [cluster, op.entry.id, kind, key, JSON.stringify(op.entry), keys.serialSlot, keys.binding] }];
    }
    case 'remove':
      return [{ text: REMOVE, values: [cluster, op.missionId] }];
    case 'front':
      return [{ text: FRONT, values: [cluster, op.missionId] }];
    case 'run': {
      const run = op.run;
      return [
        { text: REMOVE, values: [cluster, run.entry.id] },
        {
          text: RUN,
          values: [cluster, run.id, scope.hallId, run.slot, run.binding ?? null, run.entry.id, run.pid ?? null, JSON.stringify(run)],
        },
      ];
    }
    case 'pid':
      return [{ text: PID, values: [cluster, op.runId, op.pid] }];
    case 'end':
      return [{ text: END, values: [cluster, op.runId] }];
    case 'bind':
      return [{ text: BIND, values: [cluster, op.binding, op.session] }];
    case 'unbind':
      return [{ text: UNBIND, values: [cluster, op.binding] }];
    case 'set':
      // DurableState ignores a namespace that is not a word; so do the tables.
      if (!KV_NAMESPACE.test(op.ns)) return [];
      return [{ text: SET, values: [cluster, op.ns, op.key, JSON.stringify(op.value ?? null)] }];
    case 'unset':
      return [{ text: UNSET, values: [cluster, op.ns, op.key] }];
  }
}

/**
 * The operations as one transaction script: one round trip to the database. On a shared cluster its
 * last statement before COMMIT names the runs of the batch that this hall does not hold (a `run`
 * refused because its claim had gone to another hall); `refusedRuns` reads them from the results.
 */
export function batchScript(ops: readonly DurableOp[], scope: StoreScope): string {
  const lines = ['BEGIN'];
  let frees = false;
  const started: string[] = [];
  for (const op of ops) {
    for (const statement of opStatements(op, scope)) lines.push(inline(statement));
    frees ||= op.op === 'end' || op.op === 'remove';
    if (op.op === 'run') started.push(op.run.id);
    // A run that ends in the same batch has nothing left to refuse.
    if (op.op === 'end') started.splice(0, started.length, ...started.filter((id) => id !== op.runId));
  }
  // Delivered at the commit, never for a rolled-back batch: the other halls claim what a run's end freed.
  if (frees && scope.doorbell !== null) lines.push(`SELECT pg_notify(${escapeLiteral(scope.doorbell)}, '')`);
  if (scope.doorbell !== null) lines.push(refusedQuery(started, scope));
  lines.push('COMMIT');
  return `${lines.join(';\n')};`;
}

const REFUSED_MARK = 'refused_run';

function refusedQuery(runIds: readonly string[], scope: StoreScope): string {
  const ids = runIds.length === 0 ? 'ARRAY[]::text[]' : `ARRAY[${runIds.map((id) => escapeLiteral(id)).join(', ')}]::text[]`;
  return `SELECT r.id AS ${REFUSED_MARK} FROM unnest(${ids}) AS r(id)
WHERE NOT EXISTS (SELECT 1 FROM raider_hall_runs h WHERE h.cluster = ${escapeLiteral(scope.cluster)} AND h.id = r.id AND h.hall = ${escapeLiteral(scope.hallId)})`;
}

/** The run ids the batch's last query named as not held by this hall (see batchScript). */
export function refusedRuns(results: unknown): string[] {
  const list = Array.isArray(results) ? results : [results];
  const ids: string[] = [];
  for (const result of list) {
    if (typeof result !== 'object' || result === null || !('rows' in result) || !Array.isArray(result.rows)) continue;
    for (const row of result.rows) {
      if (typeof row === 'object' && row !== null && REFUSED_MARK in row) ids.push(String(row[REFUSED_MARK]));
    }
  }
  return ids;
}

/** The statement with its `$n` placeholders replaced by SQL literals. */
export function inline(statement: Statement): string {
  return statement.text.replace(/\$(\d+)/g, (_, n: string) => literal(statement.values[Number(n) - 1]));
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string') return escapeLiteral(value);
  // A list of strings, for `= ANY($n::text[])` (the statement casts it: an empty ARRAY[] has no type).
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return `ARRAY[${value.map(escapeLiteral).join(', ')}]`;
  throw new Error(`cannot write ${typeof value} ${String(value)} as an SQL literal`);
}
