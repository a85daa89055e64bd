// A database that goes away is a failure the hall retries, not a crash: a
// connection the hall had checked out of its pool (here: a transaction
// waiting on a lock) that the server ends, as a restart does, breaks with an
// 'error' event, which ended the whole process (exit 1) before the pool's
// connections each had a listener (vitest then fails the run on the unhandled
// error). The change waits, and commits once it can; so does one made while
// the embedded server is stopped, once it is started again.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { DatabaseSettings } from '../../src/adapters/storage/postgres/database-settings.js';
import { PostgresStateStore } from '../../src/adapters/storage/postgres/postgres-state-store.js';
import { usePostgresServer } from '../support/postgres-server.js';
import { eventually } from '../support/hall-client.js';

const server = usePostgresServer();
const open: PostgresStateStore[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close().catch(() => undefined);
});

describe('a shared hall while its database restarts', () => {
  it('keeps running when a connection breaks with its transaction in flight, or the server stops, and commits once it can', async () => {
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

    // The server ends that session (as a restart does): the connection breaks while checked out.
    await blocker.query('SELECT pg_terminate_backend(pid) FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()');
    await expect(first).rejects.toThrow(/could not record this in the database/);
    expect(store.accepting()).toBe(false);
    expect(store.lastError()).toMatch(/the test database/);
    // Tried again every second: committed once the lock is free.
    await blocker.query('ROLLBACK');
    await store.commit();
    await eventually(() => expect(store.accepting()).toBe(true), 15_000);
    expect(warnings).toContain('the database the test database works again');

    // The server stops and starts again: the change waits for it, the hall lives on.
    await server.stop();
    store.apply({ op: 'bind', binding: 'telegram:x:2', session: 's-2' });
    await expect(store.commit()).rejects.toThrow(/could not record this in the database/);
    expect(store.accepting()).toBe(false);
    await server.start();
    await store.commit();
    await eventually(() => expect(store.accepting()).toBe(true), 15_000);
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    try {
      const rows = await check.query("SELECT binding, session FROM raider_hall_sessions WHERE cluster = 'c' ORDER BY binding");
      expect(rows.rows).toEqual([
        { binding: 'telegram:x:1', session: 's-1' },
        { binding: 'telegram:x:2', session: 's-2' },
      ]);
    } finally {
      await check.end();
    }
    await blocker.end().catch(() => undefined);
  }, 60_000);
});
