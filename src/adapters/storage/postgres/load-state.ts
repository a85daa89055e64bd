/**
 * Reads a cluster's rows into a DurableState: the queues in `seq` order,
 * sessions, small facts and the run ledger. Rows are checked on the way in;
 * one that does not fit is skipped with a warning, as an unreadable state
 * file is.
 */
import type pg from 'pg';
import { z } from 'zod';
import type { Mission } from '../../../domain/mission.js';
import type { DurableState, LedgerRun } from '../../../ports/durable-state.js';
import { runWorktreeSchema } from '../persisted-schemas.js';

const optionalText = z.string().optional();

export const missionSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().min(1),
  mission: z.string(),
  binding: optionalText,
  telegram: z
    .looseObject({ bot: z.string(), chat_id: z.union([z.string(), z.number()]), message_thread_id: z.number().optional() })
    .optional(),
  permission_mode: optionalText,
  cwd: optionalText,
}) satisfies z.ZodType<Mission>;

export const ledgerRunSchema = z.looseObject({
  id: z.string().min(1),
  slot: z.string().min(1),
  base_name: z.string(),
  entry: missionSchema,
  binding: optionalText,
  session: optionalText,
  pid: z.number().int().optional(),
  started_at: z.number(),
  events_path: z.string(),
  log_path: z.string(),
  worktree: runWorktreeSchema.optional(),
  spare: optionalText,
}) satisfies z.ZodType<LedgerRun>;

const queueRow = z.object({ id: z.string(), queue_kind: z.enum(['slot', 'binding']), queue_key: z.string(), entry: z.unknown() });
const sessionRow = z.object({ binding: z.string(), session: z.string() });
const kvRow = z.object({ ns: z.string(), key: z.string(), value: z.unknown() });
const runRow = z.object({ id: z.string(), record: z.unknown() });

export async function loadClusterState(
  db: pg.ClientBase,
  cluster: string,
  state: DurableState,
  warn: (line: string) => void,
  /** In a shared cluster: this hall's id. Its waiting missions are then the cluster's to claim, and only its own runs are loaded. */
  sharedHall: string | null = null,
): Promise<void> {
  const skip = (what: string, id: string, error: z.ZodError) =>
    warn(`${what} ${id} in the database is not readable (${z.prettifyError(error)}); ignored`);

  const missions =
    sharedHall === null
      ? await db.query('SELECT id, queue_kind, queue_key, entry FROM raider_hall_missions WHERE cluster = $1 ORDER BY seq', [cluster])
      : { rows: [] };
  for (const raw of missions.rows) {
    const row = queueRow.parse(raw);
    const entry = missionSchema.safeParse(row.entry);
    if (!entry.success) {
      skip('mission', row.id, entry.error);
      continue;
    }
    state.load(row.queue_kind === 'slot' ? { kind: 'slot', slot: row.queue_key } : { kind: 'binding', binding: row.queue_key }, entry.data);
  }

  const sessions = await db.query('SELECT binding, session FROM raider_hall_sessions WHERE cluster = $1', [cluster]);
  for (const raw of sessions.rows) {
    const row = sessionRow.parse(raw);
    state.sessions.set(row.binding, row.session);
  }

  const facts = await db.query('SELECT ns, key, value FROM raider_hall_kv WHERE cluster = $1', [cluster]);
  for (const raw of facts.rows) {
    const row = kvRow.parse(raw);
    let ns = state.kv.get(row.ns);
    if (!ns) {
      ns = new Map();
      state.kv.set(row.ns, ns);
    }
    ns.set(row.key, row.value);
  }

  const runs =
    sharedHall === null
      ? await db.query('SELECT id, record FROM raider_hall_runs WHERE cluster = $1', [cluster])
      : await db.query('SELECT id, record FROM raider_hall_runs WHERE cluster = $1 AND hall = $2', [cluster, sharedHall]);
  for (const raw of runs.rows) {
    const row = runRow.parse(raw);
    const run = ledgerRunSchema.safeParse(row.record);
    if (!run.success) {
      skip('run', row.id, run.error);
      continue;
    }
    state.runs.set(row.id, run.data);
  }
}
