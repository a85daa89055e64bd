// PostgresStateStore on a real PostgreSQL server: what is applied is in the
// state at once and in the tables once committed, a reopened store finds it
// all, a killed writer loses nothing it was told was committed, and a schema
// from a newer hall or a cluster in use by a live hall is refused.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DurableState } from '../../src/ports/durable-state.js';
import type { DatabaseSettings } from '../../src/adapters/storage/postgres/database-settings.js';
import { readMigrations, SchemaTooNewError } from '../../src/adapters/storage/postgres/migrations.js';
import { ClusterInUseError, PostgresStateStore } from '../../src/adapters/storage/postgres/postgres-state-store.js';
import { queryDatabase as query, usePostgresServer } from '../support/postgres-server.js';
import { REPO, tempRoot } from '../support/hall-client.js';

const server = usePostgresServer();
const open: PostgresStateStore[] = [];

afterEach(async () => {
  for (const store of open.splice(0)) await store.close().catch(() => undefined);
});

function settings(url: string, overrides: Partial<DatabaseSettings> = {}): DatabaseSettings {
  return { url, where: 'the test database', cluster: 'default', hallId: 'hall-a', shared: false, leaseMs: 15_000, ...overrides };
}

async function openStore(s: DatabaseSettings, warnings: string[] = []): Promise<PostgresStateStore> {
  const store = await PostgresStateStore.open(s, { root: '/test', warn: (line) => warnings.push(line) });
  open.push(store);
  return store;
}

function snapshot(state: DurableState) {
  return {
    slots: Object.fromEntries([...state.slotQueues].map(([k, q]) => [k, q.map((m) => m.id)])),
    bindings: Object.fromEntries([...state.bindingQueues].map(([k, q]) => [k, q.map((m) => m.id)])),
    sessions: Object.fromEntries(state.sessions),
    runs: Object.fromEntries(state.runs),
    kv: Object.fromEntries([...state.kv].map(([ns, m]) => [ns, Object.fromEntries(m)])),
  };
}

const mission = (id: string, name = '1bjorn') => ({ id, name, mission: `do ${id}` });

describe('PostgresStateStore', () => {
  it('applies at once, commits in one go, and a reopened store finds the same state', async () => {
    const url = await server.freshDatabase();
    const store = await openStore(settings(url));
    store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission('a') });
    store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission('b') });
    store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission('c') });
    store.apply({
      op: 'queue',
      queue: { kind: 'binding', binding: 'telegram:ops:1' },
      entry: { ...mission('t1', 'lagertha'), binding: 'telegram:ops:1' },
    });
    // Queued again where it waits, it keeps its place; moved, it goes to the tail.
    store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission('a') });
    store.apply({ op: 'queue', queue: { kind: 'slot', slot: '2bjorn' }, entry: mission('b') });
    store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission('b') });
    store.apply({ op: 'remove', missionId: 'c' });
    store.apply({
      op: 'run',
      run: {
        id: '1bjorn-000001',
        slot: '1bjorn',
        base_name: 'bjorn',
        entry: mission('a'),
        started_at: 1700000000000,
        events_path: '/e',
        log_path: '/l',
      },
    });
    store.apply({ op: 'pid', runId: '1bjorn-000001', pid: 4242 });
    store.apply({ op: 'bind', binding: 'telegram:ops:1', session: 'sess-1' });
    store.apply({ op: 'bind', binding: 'cron:nightly', session: 'sess-2' });
    store.apply({ op: 'unbind', binding: 'cron:nightly' });
    store.apply({ op: 'set', ns: 'cron', key: 'nightly', value: { last: '2026-01-01T00:00' } });
    store.apply({ op: 'set', ns: 'telegram', key: 'ops', value: 17 });
    store.apply({ op: 'unset', ns: 'telegram', key: 'ops' });
    expect(store.written()).toBe(false);
    const expected = {
      slots: { '1bjorn': ['b'], '2bjorn': [] },
      bindings: { 'telegram:ops:1': ['t1'] },
      sessions: { 'telegram:ops:1': 'sess-1' },
      runs: { '1bjorn-000001': expect.objectContaining({ pid: 4242, entry: mission('a') }) },
      kv: { cron: { nightly: { last: '2026-01-01T00:00' } }, telegram: {} },
    };
    expect(snapshot(store.state)).toEqual(expected);
    await store.commit();
    expect(store.written()).toBe(true);
    expect(store.accepting()).toBe(true);
    expect(store.lastError()).toBeNull();
    await store.close();

    const again = await openStore(settings(url));
    expect(snapshot(again.state)).toMatchObject({
      slots: { '1bjorn': ['b'] },
      bindings: { 'telegram:ops:1': ['t1'] },
      sessions: { 'telegram:ops:1': 'sess-1' },
      runs: { '1bjorn-000001': { pid: 4242, entry: mission('a'), events_path: '/e' } },
      kv: { cron: { nightly: { last: '2026-01-01T00:00' } } },
    });
    again.apply({ op: 'end', runId: '1bjorn-000001' });
    await again.commit();
    expect((await query(url, 'SELECT count(*)::int AS n FROM raider_hall_runs')).rows[0].n).toBe(0);
  });

  it('keeps FIFO order across reopenings and one row per waiting mission', async () => {
    const url = await server.freshDatabase();
    const store = await openStore(settings(url));
    const ids = Array.from({ length: 500 }, (_, i) => `m${i}`);
    for (const id of ids) store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission(id) });
    await store.commit();
    for (const id of ids.slice(0, 100)) store.apply({ op: 'remove', missionId: id });
    await store.commit();
    await store.close();
    const again = await openStore(settings(url));
    expect(again.state.slotQueues.get('1bjorn')?.map((m) => m.id)).toEqual(ids.slice(100));
    expect((await query(url, 'SELECT count(*)::int AS n FROM raider_hall_missions')).rows[0].n).toBe(400);
  });

  it('moves a waiting mission to the front of its own queue (queue_front), idempotently, across reopenings', async () => {
    const url = await server.freshDatabase();
    const store = await openStore(settings(url));
    for (const id of ['a', 'b', 'c']) store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission(id) });
    for (const id of ['x', 'y']) store.apply({ op: 'queue', queue: { kind: 'binding', binding: 'cron:n' }, entry: mission(id, 'bjorn') });
    await store.commit();
    store.apply({ op: 'front', missionId: 'c' });
    store.apply({ op: 'front', missionId: 'y' });
    // Sent again (a batch retried after an unanswered COMMIT) it changes nothing; a mission gone is no change.
    store.apply({ op: 'front', missionId: 'c' });
    store.apply({ op: 'front', missionId: 'gone' });
    await store.commit();
    const expected = { '1bjorn': ['c', 'a', 'b'] };
    expect(snapshot(store.state).slots).toEqual(expected);
    await store.close();
    const again = await openStore(settings(url));
    expect(snapshot(again.state).slots).toEqual(expected);
    expect(snapshot(again.state).bindings).toEqual({ 'cron:n': ['y', 'x'] });
    // A mission queued later goes behind the moved one.
    again.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission('d') });
    again.apply({ op: 'front', missionId: 'b' });
    await again.commit();
    await again.close();
    const third = await openStore(settings(url));
    expect(snapshot(third.state).slots).toEqual({ '1bjorn': ['b', 'c', 'a', 'd'] });
  });

  it('commits the operations of one burst in one transaction', async () => {
    const url = await server.freshDatabase();
    const store = await openStore(settings(url));
    const commits = [];
    for (let i = 0; i < 100; i++) {
      store.apply({ op: 'queue', queue: { kind: 'slot', slot: `${1 + (i % 3)}bjorn` }, entry: mission(`g${i}`) });
      commits.push(store.commit());
    }
    await Promise.all(commits);
    // Rows written by one transaction share its id (xmin).
    expect(
      (await query(url, 'SELECT count(DISTINCT xmin::text)::int AS n, count(*)::int AS rows FROM raider_hall_missions')).rows[0],
    ).toEqual({ n: 1, rows: 100 });
  });

  it('keeps clusters apart in one database', async () => {
    const url = await server.freshDatabase();
    const a = await openStore(settings(url, { cluster: 'team-a' }));
    a.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission('only-a') });
    await a.commit();
    const b = await openStore(settings(url, { cluster: 'team-b' }));
    expect(b.state.slotQueues.size).toBe(0);
  });

  it('records the schema version, and refuses a database migrated by a newer hall', async () => {
    const url = await server.freshDatabase();
    await (await openStore(settings(url))).close();
    const files = readMigrations();
    expect((await query(url, 'SELECT version, name FROM raider_hall_schema ORDER BY version')).rows).toEqual(
      files.map((m) => ({ version: m.version, name: m.name })),
    );
    // One more than this hall's newest file: a newer hall migrated the database.
    const newest = files.length;
    await query(url, `INSERT INTO raider_hall_schema (version, name) VALUES (${newest + 1}, 'future.sql')`);
    const refused = PostgresStateStore.open(settings(url), { root: '/test', warn: () => undefined });
    await expect(refused).rejects.toBeInstanceOf(SchemaTooNewError);
    await expect(refused).rejects.toThrow(
      `the database the test database has schema version ${newest + 1}, newer than this hall knows (${newest})`,
    );
  });

  it('says where it looked when the migrations are missing (a build that did not copy them)', () => {
    // Numbered from 001 without gaps.
    const names = readMigrations().map((m) => m.name);
    expect(names.slice(0, 4)).toEqual([
      '001_init.sql',
      '002_shared_claims.sql',
      '003_cluster_faces.sql',
      '004_cluster_journals_output.sql',
    ]);
    expect(names.map((n) => Number(n.slice(0, 3)))).toEqual(names.map((_, i) => i + 1));
    const empty = tempRoot('migrations-');
    expect(() => readMigrations(empty)).toThrow(`no schema migrations in ${empty}: is the build complete? (npm run build)`);
    expect(() => readMigrations(path.join(empty, 'gone'))).toThrow(/^cannot read the schema migrations in .*gone \(ENOENT.*npm run build/);
  });

  it('refuses a cluster whose other hall holds a live lease, and lets the same hall back in', async () => {
    const url = await server.freshDatabase();
    await openStore(settings(url, { hallId: 'hall-a' }));
    const other = PostgresStateStore.open(settings(url, { hallId: 'hall-b' }), { root: '/test', warn: () => undefined });
    await expect(other).rejects.toBeInstanceOf(ClusterInUseError);
    // It says the way: several halls serve one cluster with cluster_mode: shared.
    await expect(other).rejects.toThrow(
      new RegExp(
        '^the cluster "default" in the test database is in use by the hall hall-a \\(its lease runs \\d+ s more\\), ' +
          'and a hall without cluster_mode keeps its cluster to itself; to serve it together, give every hall ' +
          'of the cluster cluster_mode: shared in \\.raider-hall\\.yml \\(they share one queue, each mission runs ' +
          'once on a hall with room, and a hall that stops is taken over within its lease\\), or give this hall ' +
          'a cluster of its own \\(cluster: NAME\\)$',
      ),
    );
    await openStore(settings(url, { hallId: 'hall-b', cluster: 'elsewhere' }));
  });

  it('names the database it cannot reach', async () => {
    const url = `postgres://postgres:x@127.0.0.1:1/nothing`;
    await expect(PostgresStateStore.open(settings(url), { root: '/test', warn: () => undefined })).rejects.toThrow(
      /^cannot use the database the test database: .*ECONNREFUSED/,
    );
  });

  it('loses nothing a killed writer was told was committed', async () => {
    const url = await server.freshDatabase();
    const writer = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'test/postgres/store-writer.ts'), url, 'writer'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    writer.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const committed: string[] = [];
    await new Promise<void>((resolve, reject) => {
      let buffer = '';
      writer.stdout.on('data', (d: Buffer) => {
        buffer += d.toString();
        const lines = buffer.split('\n');
        buffer = lines.pop() ?? '';
        committed.push(...lines);
        // Mid-stream: the writer has a commit in flight whenever it is killed.
        if (committed.length >= 600) {
          writer.kill('SIGKILL');
          resolve();
        }
      });
      writer.on('exit', (code) => (code !== null ? reject(new Error(`writer exited ${code}: ${stderr}`)) : undefined));
    });
    const store = await openStore(settings(url, { cluster: 'crash', hallId: 'writer' }));
    const queued = store.state.slotQueues.get('1crash')?.map((m) => m.id) ?? [];
    expect(queued.length).toBeGreaterThanOrEqual(committed.length);
    // In order, and every committed id is there.
    expect(queued.slice(0, committed.length)).toEqual(committed);
  });
});
