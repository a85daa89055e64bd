// A database that stops and starts again is a failure the hall retries, not
// a crash: a connection the hall had checked out of its pool when the server
// went away (here: a transaction waiting on a lock) breaks with an 'error'
// event, which ended the whole process (exit 1) before the pool's connections
// each had a listener. The change waits, and commits once the server is back.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { DatabaseSettings } from '../../src/adapters/storage/postgres/database-settings.js';
import { PostgresStateStore } from '../../src/adapters/storage/postgres/postgres-state-store.js';
import { usePostgresServer } from '../support/postgres-server.js';
import { eventually } from '../support/test-hall.js';

const server = usePostgresServer();
const open: PostgresStateStore[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close().catch(() => undefined);
});

describe('a shared hall while its database restarts', () => {
  it('keeps running with a transaction in flight when the server stops, and commits it once the server is back', async () => {
    const url = await server.freshDatabase();
    const settings: DatabaseSettings = { url, where: 'the test database', cluster: 'c', hallId: 'h', shared: true, leaseMs: 2_000 };
    const warnings: string[] = [];
    const store = await PostgresStateStore.open(settings, { root: '/h', warn: (line) => warnings.push(line) });
    open.push(store);

    // Another session holds the sessions table: the store's next transaction waits on it, its connection checked out.
    const blocker = new pg.Client({ connectionString: url });
    blocker.on('error', () => undefined);
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE raider_hall_sessions IN ACCESS EXCLUSIVE MODE');
    store.apply({ op: 'bind', binding: 'telegram:x:1', session: 's-1' });
    const first = store.commit();
    first.catch(() => undefined);
    await eventually(async () => {
      const waiting = await blocker.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted');
      expect(waiting.rows[0]?.n).toBeGreaterThan(0);
    });

    await server.stop();
    await expect(first).rejects.toThrow(/could not record this in the database/);
    expect(store.accepting()).toBe(false);
    expect(store.lastError()).toMatch(/the test database/);
    await server.start();

    // Tried again every second: committed once the server answers, and the hall says it works again.
    await store.commit();
    await eventually(() => expect(store.accepting()).toBe(true), 15_000);
    expect(warnings).toContain('the database the test database works again');
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    try {
      const rows = await check.query("SELECT binding, session FROM raider_hall_sessions WHERE cluster = 'c'");
      expect(rows.rows).toEqual([{ binding: 'telegram:x:1', session: 's-1' }]);
    } finally {
      await check.end();
    }
    await blocker.end().catch(() => undefined);
  }, 60_000);
});
