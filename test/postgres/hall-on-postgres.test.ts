// A hall whose state is in PostgreSQL behaves as on files: numbered slots
// queue in FIFO order in the database and a restarted hall runs what waited;
// sessions and binding queues live in their tables; a database that cannot
// be reached refuses new missions with a message naming it, and the hall
// takes missions again once it is back; a schema from a newer hall stops
// the start with exit code 3.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HallStartError } from '../../src/actors/hall-supervisor.js';
import { readMigrations } from '../../src/adapters/storage/postgres/migrations.js';
import { queryRows as rows, usePostgresServer } from '../support/postgres-server.js';
import { eventually, runCli, startTestHall, tempRoot, type Json, type TestHall } from '../support/test-hall.js';

const server = usePostgresServer();
let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

/** The config of a hall on `url`, its password left to ${PGPW} as a user would. */
function configOn(url: string, raiders = 'raiders: { bjorn: {} }\n'): string {
  const database = new URL(url);
  database.password = '';
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file uses ${VAR} literally; the hall expands it
  const withVariable = database.href.replace('postgres://postgres@', 'postgres://postgres:${PGPW}@');
  return `${raiders}storage: { postgres: "${withVariable}" }\ncluster: team-a\nhall_id: test-hall\n`;
}

async function startOn(url: string, root?: string, env: Record<string, string> = {}): Promise<TestHall> {
  return startTestHall({ config: configOn(url), env: { PGPW: server.password, ...env }, ...(root ? { root } : {}) });
}

describe('a hall with its state in PostgreSQL', () => {
  it('queues a numbered slot in FIFO order in the database, and a restarted hall runs what waited, in order', async () => {
    const url = await server.freshDatabase();
    const root = tempRoot();
    const record = path.join(root, 'record.txt');
    fs.writeFileSync(record, '');
    const release = path.join(root, 'release');
    hall = await startOn(url, root, { FAKE_RAIDER_RECORD: record });
    expect(await rows(url, 'SELECT cluster, id, root FROM raider_hall_halls')).toEqual([{ cluster: 'team-a', id: 'test-hall', root }]);
    const holder = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: `until ${release}` });
    expect(holder.error).toBeUndefined();
    for (const label of ['m1', 'm2', 'm3']) {
      expect(await hall.request({ cmd: 'spawn', name: '1bjorn', mission: `record ${label}` })).toMatchObject({
        queued: expect.any(Number),
      });
    }
    // Replied, so committed: the rows are there, in order.
    const waiting =
      "SELECT entry->>'mission' AS mission FROM raider_hall_missions WHERE cluster = 'team-a' AND queue_key = '1bjorn' ORDER BY seq";
    expect((await rows(url, waiting)).map((r) => r.mission)).toEqual(['record m1', 'record m2', 'record m3']);
    expect(await rows(url, 'SELECT id, hall, slot FROM raider_hall_runs')).toEqual([{ id: holder.id, hall: 'test-hall', slot: '1bjorn' }]);

    await hall.stop();
    expect(await rows(url, 'SELECT id FROM raider_hall_halls')).toEqual([]);
    hall = await startOn(url, root, { FAKE_RAIDER_RECORD: record });
    await eventually(() => expect(fs.readFileSync(record, 'utf8')).toBe('m1\nm2\nm3\n'), 20_000);
    await eventually(async () => expect(await rows(url, waiting)).toEqual([]));
    await eventually(async () => expect(await rows(url, 'SELECT id FROM raider_hall_runs')).toEqual([]));
  });

  it('moves a waiting mission to the front (queue_front) in the database, and a restarted hall runs it first', async () => {
    const url = await server.freshDatabase();
    const root = tempRoot();
    const record = path.join(root, 'record.txt');
    fs.writeFileSync(record, '');
    hall = await startOn(url, root, { FAKE_RAIDER_RECORD: record });
    await hall.request({ cmd: 'spawn', name: '1bjorn', mission: `until ${path.join(root, 'never')}` });
    const ids: string[] = [];
    for (const label of ['m1', 'm2', 'm3'])
      ids.push((await hall.request({ cmd: 'spawn', name: '1bjorn', mission: `record ${label}` })).mission_id);
    expect(await hall.request({ cmd: 'queue_front', id: ids[2] })).toMatchObject({ moved: 1, position: 1, from: 3 });
    // Replied, so committed.
    const waiting =
      "SELECT entry->>'mission' AS mission FROM raider_hall_missions WHERE cluster = 'team-a' AND queue_key = '1bjorn' ORDER BY seq";
    expect((await rows(url, waiting)).map((r) => r.mission)).toEqual(['record m3', 'record m1', 'record m2']);
    await hall.stop();
    hall = await startOn(url, root, { FAKE_RAIDER_RECORD: record });
    await eventually(() => expect(fs.readFileSync(record, 'utf8')).toBe('m3\nm1\nm2\n'), 20_000);
  });

  it('keeps a numbered slot on one session across runs and restarts, in the sessions table', async () => {
    const url = await server.freshDatabase();
    const root = tempRoot();
    hall = await startOn(url, root);
    const tap = await hall.events('raider.done');
    const first = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer one' });
    await tap.waitFor((e) => e.id === first.id);
    expect(await rows(url, 'SELECT binding, session FROM raider_hall_sessions')).toEqual([
      { binding: 'slot:1bjorn', session: first.session },
    ]);
    await hall.stop();
    hall = await startOn(url, root);
    const again = await hall.events('raider.done');
    const second = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer two' });
    expect(second.session).toBe(first.session);
    expect(await again.waitFor((e) => e.id === second.id)).toMatchObject({ session: first.session, binding: 'slot:1bjorn' });
  });

  it('runs the missions of one binding one after the other, its queue in the database', async () => {
    const url = await server.freshDatabase();
    hall = await startOn(url);
    const tap = await hall.events('raider.');
    // The first runs until the test has seen the second wait (no timing window to miss).
    const release = path.join(hall.root, 'release-a');
    const a = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${release}`, binding: 'telegram:ops:42' });
    const b = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer b', binding: 'telegram:ops:42' });
    expect(b).toMatchObject({ queued: 1, slot: 'bjorn', binding: 'telegram:ops:42', queue_depth: 1 });
    const waiting = await rows(url, "SELECT queue_kind, queue_key, entry->>'mission' AS mission FROM raider_hall_missions");
    expect(waiting).toEqual([{ queue_kind: 'binding', queue_key: 'telegram:ops:42', mission: 'answer b' }]);
    fs.writeFileSync(release, '');
    const doneB = await tap.waitFor((e) => e.type === 'raider.done' && e.response === 'b');
    const doneA = tap.all.find((e) => e.type === 'raider.done' && e.id === a.id);
    expect(doneB.session).toBe(doneA?.session);
    expect(tap.all.filter((e) => e.type === 'raider.done').map((e) => e.id)[0]).toBe(a.id);
    expect(await rows(url, 'SELECT binding FROM raider_hall_sessions')).toEqual([{ binding: 'telegram:ops:42' }]);
  });

  it('drops from its queue row a mission refused as it is pulled from the queue', async () => {
    const url = await server.freshDatabase();
    const home = tempRoot('home-');
    fs.mkdirSync(path.join(home, '.raider'));
    fs.writeFileSync(path.join(home, '.raider/config.yml'), 'providers:\n  acme: { url: "https://x/v1" }\n');
    hall = await startTestHall({
      config: configOn(url, 'raiders: { ivar: { provider: acme } }\n'),
      env: { PGPW: server.password, HOME: home },
    });
    const tap = await hall.events('raider.');
    // The first runs until the provider is gone (no timing window to miss).
    const release = path.join(hall.root, 'release-first');
    await hall.request({ cmd: 'spawn', name: '1ivar', mission: `until ${release}` });
    expect(await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'answer later' })).toMatchObject({ queued: 1 });
    expect(await rows(url, 'SELECT queue_key FROM raider_hall_missions')).toEqual([{ queue_key: '1ivar' }]);
    fs.writeFileSync(path.join(home, '.raider/config.yml'), 'providers: {}\n');
    fs.writeFileSync(release, '');
    expect(await tap.waitFor((e) => e.type === 'raider.refused')).toMatchObject({ reason: 'provider_not_stored', queued: true });
    await eventually(async () => expect(await rows(url, 'SELECT id FROM raider_hall_missions')).toEqual([]));
  });

  it('forgets at start the acp bindings and stale cron bindings, and drops their waiting missions', async () => {
    const url = await server.freshDatabase();
    hall = await startOn(url);
    await hall.stop();
    hall = undefined;
    const session = (binding: string, id: string) =>
      rows(url, "INSERT INTO raider_hall_sessions (cluster, binding, session) VALUES ('team-a', $1, $2)", [binding, id]);
    await session('acp:acp-1', 'S1');
    await session('cron:gone', 'S2');
    await session('telegram:ops:1', 'S4');
    const waiting = (id: string, kind: string, key: string, entry: Json) =>
      rows(
        url,
        "INSERT INTO raider_hall_missions (cluster, id, queue_kind, queue_key, seq, entry) VALUES ('team-a', $1, $2, $3, nextval('raider_hall_mission_seq'), $4)",
        [id, kind, key, JSON.stringify(entry)],
      );
    await waiting('w1', 'binding', 'acp:acp-1', { id: 'w1', name: 'bjorn', mission: 'drop me', binding: 'acp:acp-1' });
    await waiting('w2', 'slot', '1bjorn', { id: 'w2', name: '1bjorn', mission: 'drop me too', binding: 'cron:gone' });
    hall = await startOn(url);
    expect(await rows(url, 'SELECT binding, session FROM raider_hall_sessions')).toEqual([{ binding: 'telegram:ops:1', session: 'S4' }]);
    expect(await rows(url, 'SELECT id FROM raider_hall_missions')).toEqual([]);
    expect((await hall.request({ cmd: 'status' })).running).toBe(0);
  });

  it('refuses new missions while the database cannot be reached, naming it, and takes them again once it is back', async () => {
    const url = await server.freshDatabase();
    const root = tempRoot();
    const running = await startOn(url, root);
    hall = running;
    // A busy numbered slot: a spawn only queues, and its reply waits for nothing but the commit.
    const release = path.join(root, 'release');
    expect((await running.request({ cmd: 'spawn', name: '1bjorn', mission: `until ${release}` })).error).toBeUndefined();
    const where = `postgres://postgres@127.0.0.1:${server.port}/${new URL(url).pathname.slice(1)}`;
    await server.stop();
    try {
      // The first change after the outage finds it; the ones after it are refused at once.
      const failed = await running.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer during' });
      expect(failed.error).toMatch(new RegExp(`^the hall could not record this in the database ${where}: .*ECONNREFUSED`));
      const refused = await running.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer refused' });
      expect(refused.error).toMatch(new RegExp(`^mission not accepted: cannot write to the database ${where}: .*ECONNREFUSED`));
      expect((await running.request({ cmd: 'status' })).storage_error).toMatch(/^cannot write to the database .*ECONNREFUSED/);
      expect(refused.error).not.toMatch(/\n\s+at /);
    } finally {
      await server.start();
    }
    await eventually(async () => expect((await running.request({ cmd: 'status' })).storage_error).toBeUndefined(), 15_000, 100);
    expect((await running.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer after' })).error).toBeUndefined();
    fs.writeFileSync(release, '');
    expect(running.logs.some((line) => line.includes('works again'))).toBe(true);
  });

  it('does not start on a database migrated by a newer hall: exit code 3 and what to do', async () => {
    const url = await server.freshDatabase();
    hall = await startOn(url);
    await hall.stop();
    hall = undefined;
    await rows(url, "INSERT INTO raider_hall_schema (version, name) VALUES (99, '099_future.sql')");
    const start = startOn(url);
    await expect(start).rejects.toBeInstanceOf(HallStartError);
    await expect(start).rejects.toMatchObject({
      exitCode: 3,
      message: expect.stringMatching(/has schema version 99, newer than this hall knows \(\d+\).*upgrade this one/),
    });
  });

  it('`raider hall start` says why it cannot use the database: exit 3 for a newer schema, 1 for no answer', async () => {
    const url = await server.freshDatabase();
    const root = tempRoot();
    await (await startOn(url, root)).stop();
    const future = readMigrations().length + 1;
    await rows(url, `INSERT INTO raider_hall_schema (version, name) VALUES (${future}, 'future.sql')`);
    const newer = await runCli(['hall', 'start', root, '--quiet'], { env: { PGPW: server.password } });
    expect(newer).toMatchObject({
      code: 3,
      stderr: expect.stringContaining(`has schema version ${future}, newer than this hall knows (${future - 1})`),
    });
    // A root with a config of its own, so stderr holds the database's error only.
    const configured = tempRoot();
    fs.writeFileSync(path.join(configured, '.raider-hall.yml'), 'raiders: {}\n');
    const nobody = await runCli(['hall', 'start', configured, '--quiet'], {
      env: { RAIDER_HALL_DATABASE_URL: 'postgres://hall:secret@127.0.0.1:1/raiders' },
    });
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toMatch(/^cannot use the database postgres:\/\/hall@127\.0\.0\.1:1\/raiders: .*ECONNREFUSED/);
    expect(nobody.stderr).not.toContain('secret');
  });

  it('does not start when the password variable is not set: exit code 3, naming it', async () => {
    const url = await server.freshDatabase();
    const start = startTestHall({ config: configOn(url), env: { PGPW: undefined } });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the error message names the variable in the config syntax
    await expect(start).rejects.toMatchObject({ exitCode: 3, message: 'storage.postgres: ${PGPW} not set in the environment' });
  });
});
