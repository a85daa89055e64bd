// Cron and Telegram on a shared cluster: real hall processes (bin/raider hall
// start, with the default faces) on separate roots against one embedded
// PostgreSQL. Each cron occurrence fires on exactly one hall, and firing goes
// on when a hall is killed; each bot is polled by one hall at a time, and
// another takes over (and does not handle an update twice) when it is lost.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeBotApi } from '../telegram/fake-bot-api.js';
import { usePostgresServer } from '../support/postgres-server.js';
import { defaultAdapters } from '../../src/actors/default-adapters.js';
import {
  eventually,
  request,
  spawnHallProcess,
  startTestHall,
  tapEvents,
  tempRoot,
  type EventTap,
  type Json,
  type TestHall,
} from '../support/test-hall.js';

const server = usePostgresServer();
const LEASE_SECONDS = 2;

interface HallProcess {
  id: string;
  root: string;
  socket: string;
  child: ChildProcess;
}

const halls: HallProcess[] = [];
/** The hall that survives runs in this process (one Node start fewer on a busy machine). */
const inProcess: TestHall[] = [];
let api: FakeBotApi | undefined;
const taps: EventTap[] = [];
afterEach(async () => {
  for (const tap of taps.splice(0)) tap.close();
  await Promise.all([...halls.splice(0).map((h) => stopHall(h)), ...inProcess.splice(0).map((h) => h.stop())]);
  await api?.close();
  api = undefined;
});

async function stopHall(h: HallProcess): Promise<void> {
  if (h.child.exitCode !== null || h.child.signalCode !== null) return;
  const exited = new Promise((resolve) => h.child.once('exit', resolve));
  h.child.kill('SIGTERM');
  await exited;
}

function hallConfig(url: string, id: string, extra: string): string {
  return (
    `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: team-a\ncluster_mode: shared\n` +
    `hall_id: ${id}\nlease_seconds: ${LEASE_SECONDS}\nmax_running: 4\n${extra}`
  );
}

/** A hall process, to be killed with kill -9. */
async function startHallOn(url: string, id: string, extra: string): Promise<HallProcess> {
  const root = tempRoot();
  fs.writeFileSync(path.join(root, '.raider-hall.yml'), hallConfig(url, id, extra));
  const child = await spawnHallProcess(root);
  const hall = { id, root, socket: path.join(root, '.raider-hall.socket'), child };
  halls.push(hall);
  return hall;
}

/** A hall in this process, with the faces `raider hall start` runs. */
async function startHallHere(url: string, id: string, extra: string): Promise<TestHall> {
  const hall = await startTestHall({ config: hallConfig(url, id, extra), adapters: defaultAdapters });
  inProcess.push(hall);
  return hall;
}

async function tap(h: { socket: string }): Promise<EventTap> {
  const t = await tapEvents(h.socket, '');
  taps.push(t);
  return t;
}

function duplicates(values: unknown[]): unknown[] {
  return values.filter((v, i) => values.indexOf(v) !== i);
}

describe('cron on a shared cluster', () => {
  it('fires each occurrence of a 1-second job on one hall only, and goes on firing after a hall is killed with kill -9', async () => {
    const url = await server.freshDatabase();
    const cron = "cron:\n  - { id: tick, name: bjorn, cron: '* * * * * *', mission: 'answer tick' }\n";
    const [a, b] = await Promise.all([startHallOn(url, 'hall-a', cron), startHallHere(url, 'hall-b', cron)]);
    const events = await tap(b);
    const fired = () => events.all.filter((e) => e.type === 'cron.fired' && e.id === 'tick');
    await eventually(() => expect(fired().length).toBeGreaterThanOrEqual(3), 15_000, 50);

    a.child.kill('SIGKILL');
    const killedAt = Date.now();
    // Hall b fires on at once (no leader to replace): occurrences well after the kill.
    await eventually(
      () => expect(fired().filter((e) => Date.parse(e.slot) > killedAt + 1000).length).toBeGreaterThanOrEqual(2),
      15_000,
      50,
    );

    const slots = fired().map((e) => e.slot);
    expect(duplicates(slots)).toEqual([]);
    expect(duplicates(fired().map((e) => e.mission_id))).toEqual([]);
    for (const e of fired()) expect(['hall-a', 'hall-b']).toContain(e.hall);
    // Each occurrence's mission started at most once, wherever it ran (they share the binding cron:tick,
    // so they run one after another and trail the occurrences).
    const spawned = events.all.filter((e) => e.type === 'raider.spawned' && e.binding === 'cron:tick').map((e) => e.mission_id);
    expect(spawned.length).toBeGreaterThanOrEqual(2);
    expect(duplicates(spawned)).toEqual([]);
  });
});

const TOKEN = '12345:good-token';

function message(text: string): Json {
  return {
    message: { message_id: 1, date: 0, from: { id: 42, is_bot: false, first_name: 'Ulf' }, chat: { id: 42, type: 'private' }, text },
  };
}

async function pollState(socket: string): Promise<string> {
  return (await request(socket, { cmd: 'status' })).telegram?.ops?.state;
}

describe('Telegram on a shared cluster', () => {
  it('one hall polls a bot; when it is killed another takes over from the offset in the database and handles no update twice', async () => {
    const url = await server.freshDatabase();
    api = await FakeBotApi.start([TOKEN]);
    const telegram = `telegram:\n  api_root: ${api.url}\n  bots:\n    ops: { token: '${TOKEN}', allowlist: [42], routing: { '*': bjorn } }\n`;
    // Hall a first, so that it is the poller (the one this test can kill -9).
    const a = await startHallOn(url, 'hall-a', telegram);
    await eventually(async () => expect(await pollState(a.socket)).toBe('polling'), 10_000, 50);
    const b = await startHallHere(url, 'hall-b', telegram);
    await eventually(async () => expect(await pollState(b.socket)).toBe('standby'), 10_000, 50);
    const events = await tap(b);
    const doneFor = (text: string) => events.waitFor((e) => e.type === 'raider.done' && e.response === text, 15_000);

    for (const text of ['one', 'two', 'three']) api.push(TOKEN, message(`answer ${text}`));
    for (const text of ['one', 'two', 'three']) expect(await doneFor(text)).toMatchObject({ hall: expect.any(String) });
    // Confirmed to Telegram by the poller's next getUpdates: its offset is past update 3.
    await api.waitFor((r) => r.method === 'getUpdates' && r.body.offset === 4);

    a.child.kill('SIGKILL');
    const killedAt = Date.now();
    // As if Telegram had never had a confirmation: only the offset in the database keeps 1..3 from coming twice.
    api.forgetConfirmations(TOKEN);
    for (const text of ['four', 'five']) api.push(TOKEN, message(`answer ${text}`));
    for (const text of ['four', 'five']) expect(await doneFor(text)).toMatchObject({ hall: 'hall-b' });
    expect(Date.now() - killedAt).toBeLessThan((LEASE_SECONDS + 1) * 1000 + 5_000);
    expect(await pollState(b.socket)).toBe('polling');

    const handled = events.all.filter((e) => e.type === 'telegram.in').map((e) => e.update_id);
    expect(duplicates(handled)).toEqual([]);
    const spawned = events.all.filter((e) => e.type === 'raider.spawned' && e.binding === 'telegram:ops:42').map((e) => e.mission_id);
    expect(spawned).toHaveLength(5);
    expect(duplicates(spawned)).toEqual([]);
    // Hall b's first poll asked from the offset hall a wrote; never two polls of the bot at once.
    const afterKill = api.calls('getUpdates').filter((r) => r.at >= killedAt);
    expect(afterKill[0]?.body.offset).toBe(4);
    expect(api.maxConcurrentPolls).toBe(1);
  });
});
