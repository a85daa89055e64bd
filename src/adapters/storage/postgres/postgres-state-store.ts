/**
 * The state store on PostgreSQL, with the file store's guarantees.
 *
 * `apply` changes the in-memory state at once and queues the operation;
 * everything queued goes to the database in one transaction (group commit,
 * synchronous_commit on, one round trip), a few statements per operation, and `commit`
 * resolves once the transaction holding every operation applied so far has
 * committed. A failed transaction is rolled back and tried again every
 * second with everything queued since; while it fails, and while the hall's
 * lease cannot be renewed, `accepting()` is false and `lastError()` names the
 * database and its problem. At open, the schema is migrated, the hall joins
 * its cluster (refusing a cluster where another hall is alive: several halls
 * per cluster come later) and the cluster's rows are loaded.
 */
import os from 'node:os';
import pg from 'pg';
import { DurableState, noDirt, type DurableOp } from '../../../ports/durable-state.js';
import type { HallStateStore } from '../../../ports/state-store.js';
import type { DatabaseSettings } from './database-settings.js';
import { loadClusterState } from './load-state.js';
import { migrate, readMigrations, SchemaTooNewError } from './migrations.js';
import { batchScript, refusedRuns, type StoreScope } from './op-statements.js';
import { PostgresSharedQueue, RELEASE_CLAIMS } from './postgres-cluster-queue.js';
import { PostgresJournals } from './journal-sync.js';
import { PostgresRunOutputs } from './run-outputs.js';
import { definedFields } from '../../../domain/defined-fields.js';

const RETRY_DELAY_MS = 1_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** A query the database does not answer in this time counts as a lost connection. */
const QUERY_TIMEOUT_MS = 15_000;
/** Group commit needs one connection; the others serve the lease and start-up. */
const POOL_SIZE = 3;

export interface PostgresStateStoreOptions {
  root: string;
  /** Problems worth a line in the hall's log (database failures and recoveries). */
  warn: (message: string) => void;
}

/** Another hall holds a live lease on the cluster. */
export class ClusterInUseError extends Error {}

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class PostgresStateStore implements HallStateStore {
  readonly state = new DurableState();
  private pending: DurableOp[] = [];
  /** The sessions whose runs end in `pending`: their journals go to the cluster before those ends commit. */
  private journalPushes: Array<{ session: string; runId: string }> = [];
  /** The sessions that runs in `pending` create: their journals go to the cluster once those runs' rows commit. */
  private newSessions: Array<{ session: string; runId: string }> = [];
  private applied = 0;
  private durable = 0;
  private waiters: Waiter[] = [];
  private busy = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private leaseTimer: NodeJS.Timeout | null = null;
  /** The current failure of each kind of database work (null: it works). */
  private failures: { commit: string | null; lease: string | null } = { commit: null, lease: null };
  private readonly scope: StoreScope;
  /** With `cluster_mode: shared`: the cluster's queue that every hall claims from. */
  readonly shared?: PostgresSharedQueue;
  private readonly journals?: PostgresJournals;
  /** Runs whose record a shared cluster refused (their claims had gone elsewhere), until their end is applied. */
  private readonly refused = new Map<string, string>();

  private constructor(
    private readonly pool: pg.Pool,
    private readonly settings: DatabaseSettings,
    private readonly options: PostgresStateStoreOptions,
  ) {
    this.scope = {
      cluster: settings.cluster,
      hallId: settings.hallId,
      doorbell: settings.shared ? PostgresSharedQueue.channel(settings.cluster) : null,
    };
    if (settings.shared) {
      this.journals = new PostgresJournals(pool, settings.cluster, settings.hallId, options.root, options.warn);
      this.shared = new PostgresSharedQueue(
        pool,
        connectionConfig(settings),
        settings.cluster,
        settings.hallId,
        this.journals,
        new PostgresRunOutputs(pool, settings.cluster, settings.hallId),
        options.warn,
      );
    }
  }

  /** Migrates the schema, joins the cluster and loads its state; throws what keeps the hall from starting. */
  static async open(settings: DatabaseSettings, options: PostgresStateStoreOptions): Promise<PostgresStateStore> {
    const migrations = readMigrations();
    const pool = new pg.Pool({ ...connectionConfig(settings), max: POOL_SIZE, query_timeout: QUERY_TIMEOUT_MS });
    // An idle connection that breaks is replaced by the pool; the next query says what went wrong.
    pool.on('error', () => undefined);
    // A connection checked out of the pool (a transaction between two statements, or waiting on one)
    // also emits its break as an 'error' event, which would end the process: the database restarting
    // is a failure to retry, not a crash. The statement in flight, or the next, fails with it.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const store = new PostgresStateStore(pool, settings, options);
    try {
      const db = await pool.connect();
      try {
        await migrate(db, migrations, settings.where);
        await store.join(db);
        await loadClusterState(db, settings.cluster, store.state, options.warn, settings.shared ? settings.hallId : null);
      } finally {
        db.release();
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      if (err instanceof SchemaTooNewError || err instanceof ClusterInUseError) throw err;
      throw new Error(`cannot use the database ${settings.where}: ${databaseProblem(err)}`);
    }
    // Three renewals per lease: one lost round trip does not lose the lease.
    store.leaseTimer = setInterval(() => void store.renewLease(), Math.max(100, Math.round(settings.leaseMs / 3)));
    store.leaseTimer.unref();
    return store;
  }

  apply(op: DurableOp): void {
    if (this.closed) throw new Error('state store is closed');
    if (this.journals && op.op === 'end') {
      // The binding's next run may start on another hall as soon as this end commits.
      const session = this.state.runs.get(op.runId)?.session;
      if (session !== undefined) this.journalPushes.push({ session, runId: op.runId });
    }
    if (this.journals && op.op === 'bind') {
      // A session its run just created goes to the cluster with its binding: if this hall is lost before
      // the run ends, the binding's next run elsewhere continues it instead of starting another.
      const run = [...this.state.runs.values()].find((r) => r.session === op.session && r.binding === op.binding);
      if (run !== undefined) this.journalPushes.push({ session: op.session, runId: run.id });
    }
    if (this.journals && op.op === 'run' && op.run.session !== undefined && op.run.binding !== undefined) {
      // A session its binding does not hold yet is one this run just created. Its journal goes to the cluster
      // before the raider starts (the binding is only recorded once the raider runs): a hall lost between the
      // two leaves it for the binding's next run elsewhere (the takeover binds it), not a new session.
      if (this.state.sessions.get(op.run.binding) !== op.run.session) this.newSessions.push({ session: op.run.session, runId: op.run.id });
    }
    if (op.op === 'end') this.refused.delete(op.runId);
    this.state.apply(op, noDirt());
    this.pending.push(op);
    this.applied++;
    this.kick();
  }

  written(): boolean {
    return this.durable >= this.applied;
  }

  accepting(): boolean {
    return this.failures.commit === null && this.failures.lease === null;
  }

  lastError(): string | null {
    return this.failures.commit ?? this.failures.lease;
  }

  refusal(runId: string): string | null {
    return this.refused.get(runId) ?? null;
  }

  commit(): Promise<void> {
    if (this.durable >= this.applied) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ upTo: this.applied, resolve, reject });
      this.kick();
    });
  }

  /** Nothing to fold: every committed operation is already in its row. */
  checkpoint(): Promise<void> {
    return this.commit();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.commit();
    } catch (err) {
      this.options.warn(`${this.pending.length} changes not recorded in the database ${this.settings.where}: ${databaseProblem(err)}`);
    }
    this.closed = true;
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.shared?.close();
    // Missions this hall claimed and did not start are any hall's again, in their places.
    if (this.shared) {
      await this.pool.query(RELEASE_CLAIMS, [this.scope.cluster, [this.scope.hallId]]).catch(() => undefined);
      await this.shared.questions.forget(this.pool).catch(() => undefined);
    }
    // Leaving at once lets the next hall of this cluster start without waiting for the lease.
    await this.pool
      .query('DELETE FROM raider_hall_halls WHERE cluster = $1 AND id = $2', [this.scope.cluster, this.scope.hallId])
      .catch(() => undefined);
    await this.pool.end();
  }

  /** Registers this hall and its lease; refuses a cluster where another hall's lease is alive. */
  private async join(db: pg.ClientBase): Promise<void> {
    await db.query('BEGIN');
    try {
      await db.query("SELECT pg_advisory_xact_lock(hashtext('raider-hall:cluster:' || $1))", [this.scope.cluster]);
      const others = await db.query<{ id: string; seconds: number }>(
        `SELECT id, ceil(extract(epoch FROM lease_until - now()))::integer AS seconds FROM raider_hall_halls
         WHERE cluster = $1 AND id <> $2 AND lease_until > now() ORDER BY id`,
        [this.scope.cluster, this.scope.hallId],
      );
      const other = others.rows[0];
      if (this.shared) {
        // A hall back under its own id starts afresh: what it had claimed waits again, in its place.
        await db.query(RELEASE_CLAIMS, [this.scope.cluster, [this.scope.hallId]]);
        // Nor does it answer for the ACP sessions its previous process had open.
        await this.shared.questions.forget(db);
      } else if (other) {
        throw new ClusterInUseError(
          `the cluster "${this.scope.cluster}" in ${this.settings.where} is in use by the hall ${other.id} ` +
            `(its lease runs ${other.seconds} s more), and a hall without cluster_mode keeps its cluster to itself; ` +
            'to serve it together, give every hall of the cluster cluster_mode: shared in .raider-hall.yml ' +
            '(they share one queue, each mission runs once on a hall with room, and a hall that stops is ' +
            'taken over within its lease), or give this hall a cluster of its own (cluster: NAME)',
        );
      }
      await this.upsertHall(db);
      await db.query('COMMIT');
    } catch (err) {
      await db.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  private upsertHall(db: pg.ClientBase | pg.Pool): Promise<unknown> {
    return db.query(
      `INSERT INTO raider_hall_halls (cluster, id, host, root, pid, lease_until, renewed_at)
       VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 millisecond', now())
       ON CONFLICT (cluster, id) DO UPDATE SET host = EXCLUDED.host, root = EXCLUDED.root, pid = EXCLUDED.pid,
         lease_until = EXCLUDED.lease_until, renewed_at = EXCLUDED.renewed_at`,
      [this.scope.cluster, this.scope.hallId, os.hostname(), this.options.root, process.pid, this.settings.leaseMs],
    );
  }

  /** Renews the lease; a database that cannot be reached is a failure `status` shows and new missions hear. */
  private async renewLease(): Promise<void> {
    try {
      if (this.shared) {
        const renewed = await this.pool.query(
          "UPDATE raider_hall_halls SET lease_until = now() + $3 * interval '1 millisecond', renewed_at = now() WHERE cluster = $1 AND id = $2",
          [this.scope.cluster, this.scope.hallId, this.settings.leaseMs],
        );
        if (renewed.rowCount === 0) {
          // Another hall took this one for lost and took its work over: join again, then stop what it reported.
          this.options.warn(`the hall ${this.scope.hallId} was taken for lost by the cluster (its lease expired); it joins again`);
          await this.upsertHall(this.pool);
          this.shared.replaced();
        }
      } else await this.upsertHall(this.pool);
      this.recovered('lease');
    } catch (err) {
      this.report('lease', `cannot reach the database ${this.settings.where}: ${databaseProblem(err)}`);
    }
  }

  private kick(): void {
    if (this.busy || this.closed || this.retryTimer || this.pending.length === 0) return;
    this.busy = true;
    // setImmediate lets every operation of this turn of the event loop join the transaction.
    setImmediate(() => {
      void this.flush().finally(() => {
        this.busy = false;
        this.kick();
      });
    });
  }

  /** Commits everything queued in one transaction; on failure keeps it for the next try. */
  private async flush(): Promise<void> {
    const batch = this.pending;
    const pushes = this.journalPushes;
    const created = this.newSessions;
    const upTo = this.applied;
    this.pending = [];
    this.journalPushes = [];
    this.newSessions = [];
    let db: pg.PoolClient | null = null;
    let refused: string[];
    try {
      db = await this.pool.connect();
      for (const { session, runId } of pushes) await this.journals?.push(db, session, runId);
      refused = refusedRuns(await db.query(batchScript(batch, this.scope)));
      // After the commit: a piece goes in only while its run's row is there. Before the waiters hear of it,
      // so the raider starts only once its session's journal is in the cluster; a failure here sends the
      // batch again (every statement is idempotent) and these with it.
      for (const { session, runId } of created) if (!refused.includes(runId)) await this.journals?.push(db, session, runId);
      db.release();
    } catch (err) {
      if (db) {
        await db.query('ROLLBACK').catch(() => undefined);
        // A connection that failed mid-transaction is not trusted again.
        db.release(true);
      }
      this.pending = batch.concat(this.pending);
      this.journalPushes = pushes.concat(this.journalPushes);
      this.newSessions = created.concat(this.newSessions);
      this.fail(err, upTo);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.kick();
      }, RETRY_DELAY_MS);
      this.retryTimer.unref();
      return;
    }
    if (refused.length > 0) this.refuse(refused);
    this.durable = upTo;
    this.recovered('commit');
    const still: Waiter[] = [];
    for (const w of this.waiters) w.upTo <= this.durable ? w.resolve() : still.push(w);
    this.waiters = still;
  }

  /** Runs whose claims had gone back to the cluster: said before their runs hear that the batch committed. */
  private refuse(runIds: readonly string[]): void {
    const reason =
      `the cluster gave its mission to another hall before this hall (${this.scope.hallId}) recorded the run ` +
      '(this hall had been taken for lost); not started here';
    for (const id of runIds) this.refused.set(id, reason);
    this.options.warn(`${runIds.length} runs not started, their missions' claims were gone: ${runIds.join(', ')}`);
    this.shared?.runsRefused(runIds);
  }

  private fail(err: unknown, upTo: number): void {
    const problem = databaseProblem(err);
    this.report('commit', `cannot write to the database ${this.settings.where}: ${problem}`);
    const failed = new Error(`the hall could not record this in the database ${this.settings.where}: ${problem}`);
    const still: Waiter[] = [];
    for (const w of this.waiters) w.upTo <= upTo ? w.reject(failed) : still.push(w);
    this.waiters = still;
  }

  /** The hall's log gets each different failure once, and one line when the database works again. */
  private report(kind: 'commit' | 'lease', error: string): void {
    if (this.failures[kind] !== error) this.options.warn(error);
    this.failures[kind] = error;
  }

  private recovered(kind: 'commit' | 'lease'): void {
    if (this.failures[kind] === null) return;
    this.failures[kind] = null;
    if (this.accepting()) this.options.warn(`the database ${this.settings.where} works again`);
  }
}

/** How the hall connects: the pool's connections and the doorbell's listener alike. */
function connectionConfig(settings: DatabaseSettings): pg.ClientConfig {
  return {
    connectionString: settings.url,
    ...definedFields({ password: settings.password }),
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    application_name: 'raider-hall',
    // "Committed" must mean durable even where the database's default says otherwise.
    options: '-c synchronous_commit=on',
  };
}

/** What went wrong, in one line: node's connection errors may come as an AggregateError without a message. */
export function databaseProblem(err: unknown): string {
  if (err instanceof AggregateError && err.message === '') return err.errors.map(databaseProblem).join('; ');
  if (err instanceof Error) return err.message !== '' ? err.message : err.name;
  return String(err);
}
