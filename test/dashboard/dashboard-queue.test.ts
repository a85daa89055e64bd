/**
 * What waits, from the dashboard's API, on real halls with real (fake)
 * raider processes: `GET /api/queue`, Drop and Move to front of a waiting
 * mission (each a `dashboard.*` event before the hall acts, then the hall's
 * own `raider.dropped` / `raider.moved`, on the socket and the event
 * stream), and a move that outlives `kill -9` of the hall (the write-ahead
 * log) and is made with `raider hall queue --front`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dashboardAdapter } from '../../src/adapters/dashboard/dashboard-adapter.js';
import { request, runCli, runStarted, spawnHallProcess, startTestHall, tempRoot, type Json, type TestHall } from '../support/test-hall.js';
import { bearer, boardOf, httpRequest, json, openEventStream, startBoardHall } from './dashboard-support.js';
import { apiGet as get, apiPost as post } from './dashboard-support.js';

const halls: TestHall[] = [];
afterEach(async () => {
  for (const hall of halls.splice(0)) await hall.stop();
});

const ids = (queue: Json): string[][] => queue.queues.map((q: Json) => q.missions.map((m: Json) => m.mission_id));

describe('the waiting missions through the dashboard API', () => {
  it('lists them per queue in order; Move to front and Drop change them, each told on the bus and the stream', async () => {
    const { hall, board } = await startBoardHall();
    halls.push(hall);
    const tap = await hall.events('');
    const stream = await openEventStream(board);
    const running = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 600' });
    await runStarted(running.events_path);
    const held = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'wait 600', binding: 'cron:nightly' });
    await runStarted(held.events_path);
    const a = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer a' });
    const b = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer <b>b</b>' });
    const c = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer c' });
    const x = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer x', binding: 'cron:nightly' });
    const y = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer y', binding: 'cron:nightly' });

    const queue = await get(board, '/api/queue');
    expect(queue.status).toBe(200);
    expect(queue.queues.map((q: Json) => q.slot ?? q.binding)).toEqual(['1bjorn', 'cron:nightly']);
    expect(ids(queue)).toEqual([
      [a.mission_id, b.mission_id, c.mission_id],
      [x.mission_id, y.mission_id],
    ]);
    expect(queue.queues[0].missions[1]).toMatchObject({ position: 2, name: '1bjorn', mission: 'answer <b>b</b>', age: expect.any(Number) });

    const moved = await post(board, `/api/queue/${c.mission_id}/front`);
    expect(moved).toEqual({ status: 200, moved: 1, mission_id: c.mission_id, slot: '1bjorn', position: 1, from: 3 });
    const movedY = await post(board, `/api/queue/${y.mission_id}/front`);
    expect(movedY).toMatchObject({ moved: 1, binding: 'cron:nightly', from: 2 });
    const dropped = await post(board, `/api/queue/${a.mission_id}/drop`);
    expect(dropped).toMatchObject({ status: 200, dropped: 1, mission_id: a.mission_id });
    expect(ids(await get(board, '/api/queue'))).toEqual([
      [c.mission_id, b.mission_id],
      [y.mission_id, x.mission_id],
    ]);

    // The operator's move first, then the hall's event; the stream carries both.
    const hallMove = await tap.waitFor((e) => e.type === 'raider.moved' && e.mission_id === c.mission_id);
    expect(hallMove).toMatchObject({ slot: '1bjorn', position: 1, from: 3 });
    const asked = tap.all.findIndex((e) => e.type === 'dashboard.front' && e.id === c.mission_id && e.source === 'dashboard');
    expect(asked).toBeGreaterThanOrEqual(0);
    expect(asked).toBeLessThan(tap.all.indexOf(hallMove));
    const drop = await tap.waitFor((e) => e.type === 'raider.dropped' && e.mission_id === a.mission_id);
    expect(drop.reason).toBe('cancelled');
    expect(tap.all.some((e) => e.type === 'dashboard.drop' && e.id === a.mission_id)).toBe(true);
    await stream.waitFor((m) => m.data.includes('"raider.moved"') && m.data.includes(c.mission_id));
    await stream.waitFor((m) => m.data.includes('"raider.dropped"'));

    // The moved mission is the next to run once the slot is free.
    await hall.request({ cmd: 'cancel', id: running.id });
    const next = await tap.waitFor((e) => e.type === 'raider.spawned' && e.slot === '1bjorn' && e.id !== running.id);
    expect(next.mission_id).toBe(c.mission_id);
    stream.close();
    tap.close();
  });

  it('moves and drops waiting missions only: a run id or an unknown id is 404, and a change needs its rules', async () => {
    const { hall, board } = await startBoardHall();
    halls.push(hall);
    const running = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 600' });
    await runStarted(running.events_path);
    for (const route of [`/api/queue/${running.id}/drop`, `/api/queue/${running.id}/front`, '/api/queue/m0-000000000000/front']) {
      const reply = await post(board, route);
      expect(reply.status, route).toBe(404);
      expect(reply.error).toMatch(/no waiting mission/);
    }
    expect((await hall.request({ cmd: 'ps' })).raiders).toHaveLength(1);
    const waiting = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer later' });
    // The cookie without fetch metadata, and another site, may not move anything.
    const cookieOnly = await httpRequest(board, `/api/queue/${waiting.mission_id}/front`, {
      method: 'POST',
      headers: { Cookie: `raider_hall_dashboard_${board.port}=${board.token}`, ...json },
      body: '{}',
    });
    expect(cookieOnly.status).toBe(403);
    const sameSite = await httpRequest(board, `/api/queue/${waiting.mission_id}/drop`, {
      method: 'POST',
      headers: { ...bearer(board), 'Sec-Fetch-Site': 'same-site', ...json },
      body: '{}',
    });
    expect(sameSite.status).toBe(403);
    expect((await hall.request({ cmd: 'queue' })).queues[0].missions).toHaveLength(1);
  });

  it('answers 403 to every move of a read-only dashboard', async () => {
    const { hall, board } = await startBoardHall('dashboard: { listen: "127.0.0.1:0", read_only: true }\n');
    halls.push(hall);
    const running = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 600' });
    await runStarted(running.events_path);
    const waiting = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer later' });
    for (const verb of ['drop', 'front']) expect((await post(board, `/api/queue/${waiting.mission_id}/${verb}`)).status).toBe(403);
    expect((await get(board, '/api/queue')).queues[0].missions[0].mission_id).toBe(waiting.mission_id);
  });
});

describe('raider hall queue --front', () => {
  it('moves a mission first; the move outlives kill -9 of the hall (the write-ahead log)', async () => {
    const root = tempRoot('queue-front-');
    fs.writeFileSync(path.join(root, '.raider-hall.yml'), 'dashboard: { listen: "127.0.0.1:0" }\n');
    const child = await spawnHallProcess(root);
    const socket = path.join(root, '.raider-hall.socket');
    let runningPid = 0;
    let restartedHall = false;
    try {
      const running = await request(socket, { cmd: 'spawn', name: '1bjorn', mission: 'wait 600' });
      runningPid = running.pid;
      await runStarted(running.events_path);
      const a = await request(socket, { cmd: 'spawn', name: '1bjorn', mission: 'answer a' });
      const b = await request(socket, { cmd: 'spawn', name: '1bjorn', mission: 'answer b' });

      const moved = await runCli(['hall', 'queue', root, '--front', b.mission_id]);
      expect(moved.stdout).toBe(`Moved mission ${b.mission_id} to the front of 1bjorn (it was at position 2).\n`);
      expect(moved.code).toBe(0);
      const again = await runCli(['hall', 'queue', root, '--front', b.mission_id, '--json']);
      expect(JSON.parse(again.stdout)).toEqual({ moved: 1, mission_id: b.mission_id, slot: '1bjorn', position: 1, from: 1 });
      const unknown = await runCli(['hall', 'queue', root, '--front', 'm0-000000000000']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/no waiting mission m0-000000000000/);

      // Told is on disk: the hall dies without a checkpoint, the next one replays the log.
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const restarted = await startTestHall({ root, adapters: [dashboardAdapter] });
      halls.push(restarted);
      restartedHall = true;
      const board = await boardOf(restarted.root);
      expect(ids(await get(board, '/api/queue'))).toEqual([[b.mission_id, a.mission_id]]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      // No hall adopted the raider the killed hall left: it goes with its process group.
      if (!restartedHall && runningPid > 0) {
        try {
          process.kill(-runningPid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
  });
});
