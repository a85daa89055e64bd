/**
 * Operating what waits (issue 14 items 9 and 11): waiting missions have ids
 * that `status`, `queue` and events carry; `cancel ID` drops one durably; a
 * mission a previous hall left on a binding is reported as queued when it is
 * refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { eventually, startTestHall, tempRoot, type Json, type TestHall } from '../support/test-hall.js';
import { hall as cli, removeRoots } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

let h: TestHall | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const stateFile = (root: string, name: string) => path.join(root, '.raider-hall/state', name);
const readJson = (file: string): unknown => JSON.parse(fs.readFileSync(file, 'utf8'));

describe('queued missions', () => {
  it('carry their id in the CLI, status and queue, and cancel ID drops one for good', async () => {
    h = await startTestHall({ config: 'raiders:\n  bjorn: {}\n' });
    const root = h.root;
    const tap = await h.events('raider.');
    const first = await h.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 600' });
    const bound = await h.request({ cmd: 'spawn', name: 'bjorn', mission: 'wait 600', binding: 'cron:nightly' });
    expect(bound).toMatchObject({ id: expect.any(String) });

    const spawnCli = await cli(['spawn', '1bjorn', 'answer', 'second'], root);
    const match = /^Mission (m[0-9a-z]+-[0-9a-f]{12}) queued for 1bjorn, position 1\.\n$/.exec(spawnCli.stdout);
    expect(match, spawnCli.stdout + spawnCli.stderr).not.toBeNull();
    const slotMission = match![1]!;
    const waitingBound = await h.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer third\nline two', binding: 'cron:nightly' });
    expect(waitingBound).toMatchObject({ queued: 1, binding: 'cron:nightly', queue_depth: 1, mission_id: expect.any(String) });
    const boundMission = String(waitingBound.mission_id);
    expect(tap.all.filter((e) => e.type === 'raider.queued').map((e) => e.mission_id)).toEqual([slotMission, boundMission]);

    const status = await h.request({ cmd: 'status' });
    expect(status.waiting).toEqual([
      { mission_id: slotMission, slot: '1bjorn', position: 1 },
      { mission_id: boundMission, slot: 'bjorn', binding: 'cron:nightly', position: 1 },
    ]);
    // The person's view names them too, per queue, next first.
    const statusText = await cli(['status'], root);
    expect(statusText).toMatchObject({ code: 0, stderr: '' });
    expect(statusText.stdout).toContain(
      [
        'QUEUE                WAITING MISSION IDS (NEXT FIRST)',
        `slot 1bjorn          1       ${slotMission}`,
        `binding cron:nightly 1       ${boundMission}`,
      ].join('\n'),
    );

    const listed = await cli(['queue', '--json'], root);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({
      queues: [
        {
          slot: '1bjorn',
          missions: [{ mission_id: slotMission, position: 1, name: '1bjorn', mission: 'answer second', age: expect.any(Number) }],
        },
        {
          binding: 'cron:nightly',
          missions: [
            {
              mission_id: boundMission,
              position: 1,
              name: 'bjorn',
              binding: 'cron:nightly',
              mission: 'answer third\nline two',
              age: expect.any(Number),
            },
          ],
        },
      ],
    });
    const text = await cli(['queue', '1bjorn'], root);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toContain('1bjorn (slot queue)');
    expect(text.stdout).toContain(slotMission);
    expect(text.stdout).not.toContain(boundMission);
    expect((await cli(['queue', 'cron:nightly'], root)).stdout).toContain('answer third line two');

    const cancelled = await cli(['cancel', slotMission], root);
    expect(cancelled).toMatchObject({
      code: 0,
      stdout: `Dropped mission ${slotMission}: it no longer waits for 1bjorn and will not run.\n`,
    });
    expect(await tap.waitFor((e) => e.type === 'raider.dropped')).toMatchObject({
      mission_id: slotMission,
      slot: '1bjorn',
      reason: 'cancelled',
    });
    expect(await h.request({ cmd: 'cancel', id: boundMission })).toEqual({
      dropped: 1,
      mission_id: boundMission,
      slot: 'bjorn',
      binding: 'cron:nightly',
    });
    expect(await h.request({ cmd: 'cancel', id: boundMission })).toEqual({
      error: expect.stringMatching(new RegExp(`^mission ${boundMission} was dropped \\(cancelled\\) at `)),
      code: 'mission_dropped',
    });
    expect(await h.request({ cmd: 'queue' })).toEqual({ queues: [] });
    expect((await cli(['queue'], root)).stdout).toBe('Nothing waits.\n');
    await eventually(() => {
      expect(readJson(stateFile(root, '1bjorn.queue.json'))).toEqual([]);
      expect(readJson(stateFile(root, 'binding_queues.json'))).toEqual({});
    });

    // The dropped missions never run: once the runs that held the slot and the binding end, nothing follows.
    for (const id of [first.id, bound.id]) expect(await h.request({ cmd: 'kill', id })).toMatchObject({ killed: 1 });
    await tap.waitFor((e) => e.type === 'raider.done' && e.id === first.id);
    await tap.waitFor((e) => e.type === 'raider.done' && e.id === bound.id);
    expect(await h.request({ cmd: 'status' })).toMatchObject({ running: 0, queues: { '1bjorn': 0 }, binding_queues: {} });
    expect(tap.all.filter((e) => e.type === 'raider.spawned')).toHaveLength(2);
    tap.close();
  });

  it('a queued spawn says its place: position in --json and in words, as queue numbers it', async () => {
    h = await startTestHall({ config: 'raiders:\n  bjorn: {}\n' });
    const root = h.root;
    await h.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 600' });
    const one = await cli(['spawn', '1bjorn', 'answer', 'one', '--json'], root);
    expect(one).toMatchObject({ code: 0, stderr: '' });
    const oneReply = JSON.parse(one.stdout);
    expect(oneReply).toEqual({ queued: 1, slot: '1bjorn', queue_depth: 1, position: 1, mission_id: expect.any(String) });
    const two = await cli(['spawn', '1bjorn', 'answer', 'two', '--json'], root);
    const twoReply = JSON.parse(two.stdout);
    expect(twoReply).toMatchObject({ queue_depth: 2, position: 2 });
    const three = await cli(['spawn', '1bjorn', 'answer', 'three'], root);
    expect(three.stdout).toMatch(/^Mission m[0-9a-z]+-[0-9a-f]{12} queued for 1bjorn, position 3\.\n$/);
    const listed = JSON.parse((await cli(['queue', '--json'], root)).stdout);
    expect(listed.queues[0].missions.slice(0, 2).map((m: Json) => [m.mission_id, m.position])).toEqual([
      [oneReply.mission_id, 1],
      [twoReply.mission_id, 2],
    ]);
    // In words: a title, the table indented under it, each line ending in its text and a line break.
    const text = await cli(['queue', '1bjorn'], root);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    const lines = text.stdout.split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[0]).toBe('1bjorn (slot queue)');
    expect(lines[1]).toMatch(/^ {2}POS MISSION_ID +AGE +NAME +MISSION$/);
    expect(lines[2]).toMatch(new RegExp(`^ {2}1 {3}${oneReply.mission_id} \\d+s +1bjorn answer one$`));
    expect(lines[4]).toMatch(/^ {2}3 {3}m\S+ +\d+s +1bjorn answer three$/);
    expect(lines[5]).toBe('');
  });

  it('a spawn that waits for room under max_running is numbered within its slot queue, not the wait for room', async () => {
    h = await startTestHall({ config: 'max_running: 1\nraiders:\n  bjorn: {}\n  ulf: {}\n' });
    const root = h.root;
    await h.request({ cmd: 'spawn', name: 'bjorn', mission: 'wait 600' });
    expect(await h.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer first' })).toMatchObject({ queue_depth: 1, position: 1 });
    // Second to wait for room, first in ulf's queue.
    const ulf = await cli(['spawn', 'ulf', 'answer', 'second'], root);
    const match = /^Mission (m[0-9a-z]+-[0-9a-f]{12}) queued for ulf, position 1\.\n$/.exec(ulf.stdout);
    expect(match, ulf.stdout + ulf.stderr).not.toBeNull();
    const listed = JSON.parse((await cli(['queue', 'ulf', '--json'], root)).stdout);
    expect(listed.queues).toEqual([{ slot: 'ulf', missions: [expect.objectContaining({ mission_id: match![1], position: 1 })] }]);
  });

  it('a mission a previous hall left on a binding, refused when pulled, says queued: true', async () => {
    const root = tempRoot('queue-refused-');
    fs.writeFileSync(path.join(root, '.raider-hall.yml'), 'raiders:\n  nostore: { provider: other }\n');
    const home = tempRoot('home-');
    fs.mkdirSync(stateFile(root, ''), { recursive: true });
    fs.writeFileSync(
      stateFile(root, 'binding_queues.json'),
      JSON.stringify({
        'telegram:ops:42': [{ id: 'm1-000000000001', name: 'nostore', mission: 'answer never', binding: 'telegram:ops:42' }],
      }),
    );
    const events: Json[] = [];
    h = await startTestHall({ root, env: { HOME: home }, onEvent: (e) => events.push(e) });
    await eventually(() =>
      expect(events.find((e) => e.type === 'raider.refused')).toMatchObject({
        mission_id: 'm1-000000000001',
        queued: true,
        binding: 'telegram:ops:42',
      }),
    );
  });
});

describe('session list', () => {
  it('lists each binding with its session and the last write of its journal', async () => {
    h = await startTestHall({ config: 'raiders:\n  bjorn: {}\n' });
    const tap = await h.events('raider.done');
    const empty = await cli(['session', 'list'], h.root);
    expect(empty).toMatchObject({ code: 0, stdout: 'No binding has a session.\n' });
    const before = Date.now();
    for (const payload of [
      { name: '1bjorn', mission: 'answer a' },
      { name: 'bjorn', mission: 'answer b', binding: 'cron:nightly' },
    ]) {
      const reply = await h.request({ cmd: 'spawn', ...payload });
      await tap.waitFor((e) => e.id === reply.id);
    }
    tap.close();
    const listed = await cli(['session', 'list', '--json'], h.root);
    expect(listed.code).toBe(0);
    const sessions = JSON.parse(listed.stdout).sessions as Json[];
    expect(sessions.map((s) => s.binding)).toEqual(['cron:nightly', 'slot:1bjorn']);
    for (const s of sessions) {
      expect(s.session).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/);
      expect(s.last_used).toBeGreaterThanOrEqual(before - 1000);
      expect(s.last_used).toBe(Math.round(fs.statSync(path.join(h.root, '.raider/sessions', `${s.session}.jsonl`)).mtimeMs));
    }
    const text = await cli(['session', 'list'], h.root);
    expect(text.stdout).toMatch(/^BINDING +SESSION +LAST USED\ncron:nightly +\S+ +\d+s ago\nslot:1bjorn +\S+ +\d+s ago\n$/);
  });
});
