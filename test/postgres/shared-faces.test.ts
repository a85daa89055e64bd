// Cron and Telegram on a shared cluster: real hall processes (bin/raider hall
// start, with the default faces) on separate roots against one embedded
// PostgreSQL. Each cron occurrence fires on exactly one hall, and firing goes
// on when a hall is killed; each bot is polled by one hall at a time, and
// another takes over (and does not handle an update twice) when it is lost;
// `queue` and `status` of every hall list the cluster's waiting missions.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeBotApi } from '../telegram/fake-bot-api.js';
import { usePostgresServer } from '../support/postgres-server.js';
import { defaultAdapters } from '../../src/actors/default-adapters.js';
import { clusterQueue, clusterStatus } from '../../src/adapters/control/cluster-waiting.js';
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

import { stopHall, type HallProcess } from '../support/cluster-hall-processes.js';

const server = usePostgresServer();
const LEASE_SECONDS = 2;

/**
 * What one test started, stopped when that test finishes. (Side by side,
 * the tests of this file started their hall processes too slowly on a busy
 * machine: they run one after the other.)
 */
class Started {
  readonly halls: HallProcess[] = [];
  /** Halls in this process (one Node start fewer on a busy machine): the ones no test kills. */
  readonly inProcess: TestHall[] = [];
  readonly taps: EventTap[] = [];
  api: FakeBotApi | undefined;

  async close(): Promise<void> {
    for (const tap of this.taps) tap.close();
    await Promise.all([...this.halls.map((h) => stopHall(h)), ...this.inProcess.map((h) => h.stop())]);
    await this.api?.close();
  }

  /** A hall process, to be killed with kill -9. */
  async hallProcess(url: string, id: string, extra: string): Promise<HallProcess> {
    const root = tempRoot();
    fs.writeFileSync(path.join(root, '.raider-hall.yml'), hallConfig(url, id, extra));
    const child = await spawnHallProcess(root);
    const hall = { id, root, socket: path.join(root, '.raider-hall.socket'), child };
    this.halls.push(hall);
    return hall;
  }

  /** A hall in this process, with the faces `raider hall start` runs. */
  async hallHere(url: string, id: string, extra: string, maxRunning = 4): Promise<TestHall> {
    const hall = await startTestHall({ config: hallConfig(url, id, extra, maxRunning), adapters: defaultAdapters });
    this.inProcess.push(hall);
    return hall;
  }

  async tap(h: { socket: string }): Promise<EventTap> {
    const t = await tapEvents(h.socket, '');
    this.taps.push(t);
    return t;
  }
}

function started(onTestFinished: (fn: () => Promise<void>, timeout?: number) => void): Started {
  const scope = new Started();
  onTestFinished(() => scope.close(), 60_000);
  return scope;
}

function hallConfig(url: string, id: string, extra: string, maxRunning = 4): string {
  return (
    `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: team-a\ncluster_mode: shared\n` +
    `hall_id: ${id}\nlease_seconds: ${LEASE_SECONDS}\nmax_running: ${maxRunning}\n${extra}`
  );
}

function duplicates(values: unknown[]): unknown[] {
  return values.filter((v, i) => values.indexOf(v) !== i);
}

const TOKEN = '12345:good-token';

function message(text: string): Json {
  return {
    message: { message_id: 1, date: 0, from: { id: 42, is_bot: false, first_name: 'Ulf' }, chat: { id: 42, type: 'private' }, text },
  };
}

async function pollState(socket: string): Promise<string> {
  return (await request(socket, { cmd: 'status' })).telegram?.ops?.state;
}

function withoutAges(reply: Json): Json {
  return { queues: reply.queues.map((q: Json) => ({ ...q, missions: q.missions.map(({ age: _age, ...m }: Json) => m) })) };
}

describe('cron, Telegram and the waiting list on a shared cluster', () => {
  it('fires each occurrence of a 1-second job on one hall only, and goes on firing after a hall is killed with kill -9', async ({
    onTestFinished,
  }) => {
    const own = started(onTestFinished);
    const url = await server.freshDatabase();
    const cron = "cron:\n  - { id: tick, name: bjorn, cron: '* * * * * *', mission: 'answer tick' }\n";
    const [a, b] = await Promise.all([own.hallProcess(url, 'hall-a', cron), own.hallHere(url, 'hall-b', cron)]);
    const events = await own.tap(b);
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

  it('one hall polls a bot; when it is killed another takes over from the offset in the database and handles no update twice', async ({
    onTestFinished,
  }) => {
    const own = started(onTestFinished);
    const url = await server.freshDatabase();
    const api = await FakeBotApi.start([TOKEN]);
    own.api = api;
    const telegram = `telegram:\n  api_root: ${api.url}\n  bots:\n    ops: { token: '${TOKEN}', allowlist: [42], routing: { '*': bjorn } }\n`;
    // Hall a first, so that it is the poller (the one this test can kill -9).
    const a = await own.hallProcess(url, 'hall-a', telegram);
    await eventually(async () => expect(await pollState(a.socket)).toBe('polling'), 10_000, 50);
    const b = await own.hallHere(url, 'hall-b', telegram);
    await eventually(async () => expect(await pollState(b.socket)).toBe('standby'), 10_000, 50);
    const events = await own.tap(b);
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

  it("every hall lists the cluster's waiting missions, in the order they start, in queue and in status", async ({ onTestFinished }) => {
    const own = started(onTestFinished);
    const url = await server.freshDatabase();
    const release = path.join(tempRoot(), 'release');
    const [a, b] = await Promise.all([own.hallHere(url, 'hall-a', '', 1), own.hallHere(url, 'hall-b', '', 1)]);
    try {
      const holders = [
        await a.request({ cmd: 'spawn', name: '1bjorn', mission: `until ${release}` }),
        await a.request({ cmd: 'spawn', name: 'bjorn', binding: 'telegram:ops:7', mission: `until ${release}` }),
      ];
      // Both halls are full (max_running: 1): each runs one holder, and what comes next waits in the database.
      await eventually(async () => expect((await a.request({ cmd: 'ps' })).raiders).toHaveLength(2), 15_000, 50);
      const w1 = await b.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer w1' });
      const w2 = await a.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer w2' });
      const w3 = await b.request({ cmd: 'spawn', name: 'bjorn', binding: 'telegram:ops:7', mission: 'answer w3' });
      for (const reply of [...holders, w1, w2, w3]) expect(reply).toMatchObject({ queued: 1 });

      const queue = await a.request({ cmd: 'queue' });
      expect(queue).toEqual({
        queues: [
          {
            slot: '1bjorn',
            missions: [
              { mission_id: w1.mission_id, position: 1, name: '1bjorn', mission: 'answer w1', age: expect.any(Number) },
              { mission_id: w2.mission_id, position: 2, name: '1bjorn', mission: 'answer w2', age: expect.any(Number) },
            ],
          },
          {
            binding: 'telegram:ops:7',
            missions: [
              {
                mission_id: w3.mission_id,
                position: 1,
                name: 'bjorn',
                mission: 'answer w3',
                binding: 'telegram:ops:7',
                age: expect.any(Number),
              },
            ],
          },
        ],
      });
      // The same from the other hall (ages aside: time goes on).
      expect(withoutAges(await b.request({ cmd: 'queue' }))).toEqual(withoutAges(queue));
      expect(withoutAges(await b.request({ cmd: 'queue', slot: '1bjorn' }))).toEqual(withoutAges({ queues: [queue.queues[0]] }));

      for (const hall of [a, b]) {
        const status = await hall.request({ cmd: 'status' });
        expect(status.queues).toMatchObject({ '1bjorn': 2 });
        expect(status.binding_queues).toEqual({ 'telegram:ops:7': 1 });
        expect(status.waiting).toEqual([
          { mission_id: w1.mission_id, slot: '1bjorn', position: 1 },
          { mission_id: w2.mission_id, slot: '1bjorn', position: 2 },
          { mission_id: w3.mission_id, slot: 'bjorn', binding: 'telegram:ops:7', position: 1 },
        ]);
      }
    } finally {
      fs.writeFileSync(release, '');
    }
    // Once they ran, nothing waits anywhere.
    await eventually(async () => expect((await b.request({ cmd: 'queue' })).queues).toEqual([]), 15_000, 50);
    expect((await a.request({ cmd: 'status' })).waiting).toBeUndefined();
  });

  it('a mission a hall has claimed and is starting names that hall', () => {
    const entry = (id: string) => ({ id, name: '1bjorn', mission: `answer ${id}` });
    const reply = clusterQueue(
      { slotQueues: new Map(), bindingQueues: new Map() },
      [
        { queue: { kind: 'slot', slot: '1bjorn' }, entry: entry('m-a'), hall: 'hall-b' },
        { queue: { kind: 'slot', slot: '1bjorn' }, entry: entry('m-b'), hall: null },
      ],
      Date.now(),
    );
    expect(reply).toEqual({
      queues: [
        {
          slot: '1bjorn',
          missions: [
            { mission_id: 'm-a', position: 1, name: '1bjorn', mission: 'answer m-a', hall: 'hall-b' },
            { mission_id: 'm-b', position: 2, name: '1bjorn', mission: 'answer m-b' },
          ],
        },
      ],
    });
    const status = clusterStatus(
      { running: 0, root: '/r', slots: [], queues: {}, binding_queues: {}, runs: [] },
      { slotQueues: new Map(), bindingQueues: new Map() },
      [{ queue: { kind: 'slot', slot: '1bjorn' }, entry: entry('m-a'), hall: 'hall-b' }],
      Date.now(),
    );
    expect(status).toMatchObject({
      queues: { '1bjorn': 1 },
      waiting: [{ mission_id: 'm-a', slot: '1bjorn', position: 1, hall: 'hall-b' }],
    });
  });
});
