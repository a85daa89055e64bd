/**
 * The dashboard's API on a real hall with real (fake) raider processes:
 * runs live and past (surviving a restart), a run's page, the event stream
 * with its replay, spawn with its refusals, cancel and kill.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/adapters/control/event-bus.js';
import { EventRing } from '../../src/adapters/dashboard/event-stream.js';
import { eventually, runStarted, startTestHall, type Json, type TestHall } from '../support/test-hall.js';
import { dashboardAdapter } from '../../src/adapters/dashboard/dashboard-adapter.js';
import { bearer, boardOf, httpRequest, openEventStream, startBoardHall, type Board } from './dashboard-support.js';
import { apiGet as get, apiPost as post } from './dashboard-support.js';
import { raiderDone } from '../support/bus-events.js';

const halls: TestHall[] = [];
afterEach(async () => {
  for (const hall of halls.splice(0)) await hall.stop();
});

async function started(): Promise<{ hall: TestHall; board: Board }> {
  const s = await startBoardHall();
  halls.push(s.hall);
  return s;
}

/** A route of the page without the version in it: `/app/v-HASH/main.js` is `/app/main.js`. */
function unversioned(route: string): string {
  return route.replace(/^\/(app|vendor)\/v-[0-9a-f]+\//, '/$1/');
}

/** Spawns through the dashboard and waits for the run's end on the bus. */
async function runToEnd(hall: TestHall, board: Board, mission: string): Promise<Json> {
  const events = await hall.events('raider.done');
  try {
    const reply = await post(board, '/api/spawn', { name: 'bjorn', mission });
    return await events.waitFor((e) => e.id === reply.id);
  } finally {
    events.close();
  }
}

describe('GET /api/runs', () => {
  it('lists running runs first, then past ones; filters by raider, status and text; pages', async () => {
    const { hall, board } = await started();
    await runToEnd(hall, board, 'answer first');
    await runToEnd(hall, board, 'fail broken');
    const waiting = await post(board, '/api/spawn', { name: 'ivar', mission: 'wait 30' });
    await runStarted(waiting.events_path);

    const all = await get(board, '/api/runs');
    expect(all.total).toBe(3);
    expect(all.runs.map((r: Json) => r.status)).toEqual(['running', expect.any(String), expect.any(String)]);
    expect(all.runs[0]).toMatchObject({ id: waiting.id, slot: 'ivar', mission: 'wait 30', duration: null });
    expect(
      all.runs
        .slice(1)
        .map((r: Json) => r.status)
        .sort(),
    ).toEqual(['completed', 'failed']);

    expect((await get(board, '/api/runs?status=failed')).runs.map((r: Json) => r.error)).toEqual(['broken']);
    expect((await get(board, '/api/runs?raider=bjorn')).total).toBe(2);
    expect((await get(board, '/api/runs?text=WAIT')).runs.map((r: Json) => r.id)).toEqual([waiting.id]);
    const page = await get(board, '/api/runs?limit=1&offset=1');
    expect(page).toMatchObject({ total: 3, offset: 1, limit: 1 });
    expect(page.runs).toHaveLength(1);
    expect((await get(board, '/api/runs?limit=0')).status).toBe(400);
  });

  it('keeps past runs across a restart: they come from the events files', async () => {
    const { hall, board } = await started();
    const done = await runToEnd(hall, board, 'answer before the restart');
    await hall.stop();
    halls.splice(0);

    const again = await startTestHall({ root: hall.root, adapters: [dashboardAdapter] });
    halls.push(again);
    const board2 = await boardOf(again.root);
    expect(board2.token).not.toBe(board.token);
    const runs = await get(board2, '/api/runs');
    expect(runs.runs).toEqual([expect.objectContaining({ id: done.id, slot: 'bjorn', status: 'completed' })]);
  });
});

describe('GET /api/runs, runs of one second', () => {
  it('lists past runs that started in the same second newest first: .10 before .9', async () => {
    const { hall, board } = await started();
    const done = await runToEnd(hall, board, 'answer one of a second');
    await hall.stop();
    halls.splice(0);
    // Ten more runs of that second, as a burst leaves them: SLOT-SEC.2 ... SLOT-SEC.11.
    const logs = path.join(hall.root, '.raider-hall', 'logs');
    const suffixes = Array.from({ length: 10 }, (_, i) => i + 2);
    for (const n of suffixes) fs.copyFileSync(path.join(logs, `${done.id}.events.jsonl`), path.join(logs, `${done.id}.${n}.events.jsonl`));

    const again = await startTestHall({ root: hall.root, adapters: [dashboardAdapter] });
    halls.push(again);
    const runs = await get(await boardOf(again.root), '/api/runs');
    expect(runs.runs.map((r: Json) => r.id)).toEqual([...suffixes.reverse().map((n) => `${done.id}.${n}`), done.id]);
  });
});

describe('GET /api/runs/ID', () => {
  it('gives the run, its events, its end and its timeline; 404 for unknown or malformed ids', async () => {
    const { hall, board } = await started();
    const done = await runToEnd(hall, board, 'answer <b>bold</b>');
    const detail = await get(board, `/api/runs/${done.id}`);
    expect(detail.run).toMatchObject({ id: done.id, status: 'completed', mission: 'answer <b>bold</b>' });
    expect(detail.events.map((e: Json) => e.type)).toContain('message');
    expect(detail.end).toMatchObject({ status: 'completed', response: '<b>bold</b>' });
    expect(detail.timeline.map((e: Json) => e.type)).toEqual(['raider.spawned', 'raider.done']);
    expect((await get(board, '/api/runs/bjorn-1')).status).toBe(404);
    expect((await get(board, `/api/runs/${encodeURIComponent('../state-1')}`)).status).toBe(404);
  });
});

describe('GET /api/runs/ID of a run that failed without a result', () => {
  it('tells its real exit code as raider.done does, across a restart, with its stderr lines and its times to the millisecond', async () => {
    const { hall, board } = await started();
    const events = await hall.events('raider.');
    let done: Json;
    let spawned: Json;
    try {
      const reply = await post(board, '/api/spawn', { name: 'bjorn', mission: 'stderr-fail no engine configured' });
      done = await events.waitFor((e) => e.type === 'raider.done' && e.id === reply.id);
      spawned = events.all.find((e) => e.type === 'raider.spawned' && e.id === reply.id) ?? {};
    } finally {
      events.close();
    }
    expect(done).toMatchObject({ status: 'failed', exit_code: 3, error: expect.stringMatching(/exit code 3/) });

    const detail = await get(board, `/api/runs/${done.id}`);
    expect(detail.run).toMatchObject({ status: 'failed', error: done.error });
    expect(detail.log).toEqual(expect.arrayContaining(['no engine configured']));
    // The run id holds the second; the bus's times hold the millisecond, and so does the row.
    expect(detail.run.started_at).toBe(Math.round(spawned.time * 1000));
    expect(detail.run.ended_at).toBe(Math.round(done.time * 1000));
    expect(detail.run.duration).toBeCloseTo(done.time - spawned.time, 3);

    await hall.stop();
    halls.splice(0);
    const again = await startTestHall({ root: hall.root, adapters: [dashboardAdapter] });
    halls.push(again);
    const board2 = await boardOf(again.root);
    const after = await get(board2, `/api/runs/${done.id}`);
    expect(after.run).toMatchObject({ status: 'failed', error: done.error });
    expect(after.log).toEqual(expect.arrayContaining(['no engine configured']));
    expect((await get(board2, '/api/runs?status=failed')).runs).toEqual([expect.objectContaining({ id: done.id, error: done.error })]);
  });

  it('gives a run with a result its start and end from its events file to the millisecond', async () => {
    const { hall, board } = await started();
    const done = await runToEnd(hall, board, 'answer fine');
    const events = await get(board, `/api/runs/${done.id}`);
    const first: Json = events.events[0];
    const finished: Json = events.events.at(-1);
    expect([first.type, finished.type]).toEqual(['run.started', 'run.finished']);
    await hall.stop();
    halls.splice(0);
    const again = await startTestHall({ root: hall.root, adapters: [dashboardAdapter] });
    halls.push(again);
    const row = (await get(await boardOf(again.root), `/api/runs/${done.id}`)).run;
    expect(row.started_at).toBe(Math.round(first.time * 1000));
    // The events file's last write is its run.finished (the file's clock and the raider's may differ by a tick).
    expect(Math.abs(row.ended_at - finished.time * 1000)).toBeLessThan(100);
  });
});

describe('GET /api/raiders and /api/missions', () => {
  it('names the configured raiders in their order, and the missions of the runs asked for that the hall knows', async () => {
    const s = await startBoardHall('raiders:\n  ivar: {}\n  bjorn: {}\ndashboard: { listen: "127.0.0.1:0" }\n');
    halls.push(s.hall);
    expect(await get(s.board, '/api/raiders')).toMatchObject({ status: 200, raiders: ['ivar', 'bjorn'] });
    const done = await runToEnd(s.hall, s.board, 'answer remembered');
    expect(await get(s.board, `/api/missions?ids=${done.id},bjorn-1`)).toMatchObject({
      status: 200,
      missions: { [done.id]: 'answer remembered' },
    });
    expect((await get(s.board, '/api/missions')).status).toBe(400);
  });
});

describe('POST /api/spawn, cancel, kill', () => {
  it('answers with the socket spawn reply, refusals included', async () => {
    const { board } = await started();
    const refused = await post(board, '/api/spawn', { name: '../x', mission: 'answer' });
    expect(refused.status).toBe(200);
    expect(refused.error).toMatch(/invalid raider name/);
    const malformed = await post(board, '/api/spawn', { name: 3 });
    expect(malformed.status).toBe(400);
    expect(malformed.error).toMatch(/name/);
  });

  it('cancels a running run (dashboard.cancel on the bus before its end) and kills one', async () => {
    const { hall, board } = await started();
    const events = await hall.events('');
    try {
      const run = await post(board, '/api/spawn', { name: 'bjorn', mission: 'wait 30' });
      await runStarted(run.events_path);
      expect(await post(board, `/api/runs/${run.id}/cancel`, {})).toMatchObject({ status: 200, cancelled: 1, id: run.id });
      const done = await events.waitFor((e) => e.type === 'raider.done' && e.id === run.id);
      expect(done.status).toBe('cancelled');
      const asked = events.all.findIndex((e) => e.type === 'dashboard.cancel' && e.id === run.id && e.source === 'dashboard');
      expect(asked).toBeGreaterThanOrEqual(0);
      expect(asked).toBeLessThan(events.all.indexOf(done));

      const deaf = await post(board, '/api/spawn', { name: 'ivar', mission: 'deaf 30' });
      await runStarted(deaf.events_path);
      expect(await post(board, `/api/runs/${deaf.id}/kill`, {})).toMatchObject({ killed: 1 });
      expect((await events.waitFor((e) => e.type === 'raider.done' && e.id === deaf.id)).signaled).toBe(1);
      expect(await post(board, '/api/runs/nobody-1/cancel', {})).toMatchObject({ error: 'raider not found' });
    } finally {
      events.close();
    }
  });

  it("answers a run page's 404 and a cancel with what is true: the run ended, a mission waits or was dropped, or nothing is known", async () => {
    const { hall, board } = await started();
    const ended = await runToEnd(hall, board, 'answer over');
    await eventually(async () => expect((await hall.request({ cmd: 'ps' })).raiders).toEqual([]));
    expect(await post(board, `/api/runs/${ended.id}/cancel`, {})).toMatchObject({
      status: 200,
      error: expect.stringMatching(new RegExp(`^run ${ended.id} has ended \\(completed at .*\\): there is nothing to cancel$`)),
      code: 'run_ended',
    });

    await post(board, '/api/spawn', { name: '1bjorn', mission: 'wait 600' });
    const waiting = await post(board, '/api/spawn', { name: '1bjorn', mission: 'answer later' });
    const missionId = String(waiting.mission_id);
    expect(await get(board, `/api/runs/${missionId}`)).toEqual({
      status: 404,
      error: expect.stringContaining(`${missionId} is a mission waiting in the queue of 1bjorn (position 1); it has no run to show yet`),
      code: 'mission_waiting',
    });
    expect(await post(board, `/api/queue/${missionId}/drop`, {})).toMatchObject({ dropped: 1 });
    expect(await get(board, `/api/runs/${missionId}`)).toEqual({
      status: 404,
      error: expect.stringMatching(new RegExp(`^mission ${missionId} was dropped \\(cancelled\\) at `)),
      code: 'mission_dropped',
    });
    expect(await get(board, '/api/runs/nobody-1700000000')).toEqual({ status: 404, error: 'raider not found', code: 'run_not_found' });
  });
});

describe('the page', () => {
  it('serves its scripts and styles from the hall, within 150 KiB gzipped', async () => {
    const { board } = await started();
    const page = await httpRequest(board, '/', { headers: bearer(board) });
    const routes = [...page.body.matchAll(/(?:href|src)="(\/[^"]+)"/g)].map((m) => m[1] ?? '');
    const importMap = /<script type="importmap">(.*?)<\/script>/.exec(page.body)?.[1] ?? '{}';
    routes.push(...Object.values(JSON.parse(importMap).imports as Record<string, string>));
    // The page names this version of each file (/app/v-HASH/bundle.js): `npm run build`'s bundle of our
    // modules with Preact and htm, and of our style sheets with uPlot's; uPlot itself by the import map.
    expect(routes.map(unversioned).sort()).toEqual(['/app/bundle.css', '/app/bundle.js', '/app/icon.svg', '/vendor/uplot.mjs']);
    let gzipped = 0;
    for (const route of new Set(routes)) {
      const reply = await httpRequest(board, route, { headers: bearer(board) });
      expect(reply.status, route).toBe(200);
      expect(reply.body).not.toMatch(/sourceMappingURL/);
      gzipped += gzipSync(reply.body).length;
    }
    expect(gzipped).toBeLessThan(150 * 1024);
  });
});

describe('the page its first data', () => {
  it('inlines status, cluster, runs and the bus seq as JSON that a mission cannot break out of', async () => {
    const { hall, board } = await started();
    const mission = 'answer </script><script>alert(1)</script><!--';
    const done = await runToEnd(hall, board, mission);
    const page = await httpRequest(board, '/', { headers: bearer(board) });
    expect(page.status).toBe(200);
    // One data block, and no other script than the import map and the bundle: the mission stayed inside the JSON.
    expect(page.body.match(/<script/g)).toHaveLength(3);
    const block = /<script type="application\/json" id="initial">(.*?)<\/script>/s.exec(page.body)?.[1] ?? '';
    expect(block).not.toContain('<');
    const first = JSON.parse(block) as Json;
    expect(first.status).toMatchObject({ root: hall.root });
    expect(first.cluster).toEqual({ shared: false, hall: null, halls: [] });
    expect(first.runs.runs.find((r: Json) => r.id === done.id)).toMatchObject({ mission, status: 'completed' });
    expect(first.seq).toBeGreaterThanOrEqual(done.seq);
  });

  it('starts the event stream after the seq it is given, as a reconnect with Last-Event-ID would', async () => {
    const { hall, board } = await started();
    const first = await runToEnd(hall, board, 'answer one');
    const second = await runToEnd(hall, board, 'answer two');
    const stream = await openEventStream(board, {}, `/api/events?since=${first.seq}`);
    try {
      // Replayed from the hall's ring: the second run's end, and nothing of the first.
      await stream.waitFor((m) => m.id === String(second.seq));
      expect(stream.messages.length).toBeGreaterThan(1);
      expect(stream.messages.every((m) => Number(m.id) > first.seq)).toBe(true);
    } finally {
      stream.close();
    }
  });
});

describe('GET /api/events', () => {
  it('sends each bus event exactly as the socket does, with its seq as id, and replays what a reconnect missed', async () => {
    const { hall, board } = await started();
    const socketTap = await hall.events('raider.');
    const stream = await openEventStream(board);
    const done = await runToEnd(hall, board, 'answer streamed');
    const sse = await stream.waitFor((m) => m.data.includes('"raider.done"'));
    const line = socketTap.lines.find((l) => JSON.parse(l).type === 'raider.done' && JSON.parse(l).id === done.id);
    expect(sse.data).toBe(line);
    expect(sse.id).toBe(String(done.seq));
    stream.close();
    socketTap.close();

    const spawnedId = stream.messages.find((m) => m.data.includes('"raider.spawned"'))?.id ?? '';
    expect(spawnedId).toMatch(/^\d+$/);
    const replay = await openEventStream(board, { 'Last-Event-ID': spawnedId });
    const missed = await replay.waitFor((m) => m.id === sse.id);
    expect(missed.data).toBe(sse.data);
    expect(Number(replay.messages[0]?.id)).toBe(Number(spawnedId) + 1);
    replay.close();

    // A seq this hall never sent (a restarted hall begins again at 1): the page must reload.
    const stale = await openEventStream(board, { 'Last-Event-ID': '999999' });
    expect((await stale.waitFor((m) => m.event === 'reload')).data).toMatch(/reload/);
    stale.close();
  });

  it('answers a poll (poll=1) with what came after `since` as the bus sent it, the newest seq, or reload when it is gone', async () => {
    const { hall, board } = await started();
    const first = await runToEnd(hall, board, 'answer before');
    const socketTap = await hall.events('');
    const second = await runToEnd(hall, board, 'answer polled');
    const polled = await httpRequest(board, `/api/events?poll=1&since=${first.seq}`, { headers: bearer(board) });
    expect(polled.status).toBe(200);
    expect(polled.headers['content-type']).toMatch(/^application\/json/);
    const reply = JSON.parse(polled.body) as Json;
    // The second run's spawn and end, each exactly as the socket's subscribe sent it, and nothing of the first
    // (compared up to its end: the socket's copy may still be on its way, and more may follow it).
    await socketTap.waitFor((e) => e.seq === second.seq);
    const upToSecond = (seq: number) => seq > first.seq && seq <= second.seq;
    const lines = socketTap.lines.filter((l) => upToSecond((JSON.parse(l) as Json).seq));
    expect(reply.events.filter((e: Json) => upToSecond(e.seq)).map((e: Json) => JSON.stringify(e))).toEqual(lines);
    expect(reply.events.every((e: Json) => e.seq > first.seq)).toBe(true);
    expect(reply.events.map((e: Json) => e.type)).toEqual(expect.arrayContaining(['raider.spawned', 'raider.done']));
    expect(reply.latest).toBeGreaterThanOrEqual(second.seq);
    socketTap.close();

    const caughtUp = await get(board, `/api/events?poll=1&since=${reply.latest}`);
    expect(caughtUp).toMatchObject({ status: 200, events: [], latest: reply.latest });
    // A seq this hall never sent: what came is not known, the page loads its views again.
    expect(await get(board, '/api/events?poll=1&since=999999')).toEqual({ status: 200, latest: reply.latest, reload: true });
    const noSince = await httpRequest(board, '/api/events?poll=1', { headers: bearer(board) });
    expect(noSince.status).toBe(400);
    expect(noSince.body).toMatch(/since=SEQ/);
  });

  it('keeps at least the last 1,000 events; an older Last-Event-ID gets reload', () => {
    const bus = new EventBus(() => {});
    const ring = new EventRing(bus);
    for (let i = 0; i < 1500; i++) bus.publish({ type: 'cron.coalesced', id: 'tick', name: 'bjorn', slot: String(i) });
    expect(ring.since(1500 - 1000)).toHaveLength(1000);
    expect(ring.since(1500)).toEqual([]);
    expect(ring.since(10)).toBeNull();
    expect(ring.since(1501)).toBeNull();
    ring.close();
    expect(bus.subscriberCount()).toBe(0);
  });

  it('answers a poll after an older seq than it keeps with reload, and one it keeps with what came after', () => {
    const bus = new EventBus(() => {});
    const ring = new EventRing(bus);
    for (let i = 0; i < 1500; i++) bus.publish({ type: 'cron.coalesced', id: 'tick', name: 'bjorn', slot: String(i) });
    expect(JSON.parse(ring.batchSince(10))).toEqual({ latest: 1500, reload: true });
    const polled = JSON.parse(ring.batchSince(1498)) as Json;
    expect(polled.latest).toBe(1500);
    expect(polled.events.map((e: Json) => [e.seq, e.slot])).toEqual([
      [1499, '1498'],
      [1500, '1499'],
    ]);
    ring.close();
  });

  it('holds no more than its byte bound, however big the events', () => {
    const bus = new EventBus(() => {});
    const ring = new EventRing(bus, 1024, 1024 * 1024);
    const big = 'x'.repeat(100 * 1024);
    for (let i = 0; i < 50; i++) bus.publish(raiderDone(`bjorn-${i}`, { response: big }));
    const kept = ring.since(50 - 9);
    expect(kept).toHaveLength(9);
    expect(ring.since(50 - 11)).toBeNull();
    expect(ring.about('bjorn-49')).toEqual([expect.objectContaining({ type: 'raider.done', seq: 50, response: big })]);
    ring.close();
  });

  it('drops a reader that stops reading instead of buffering for it', async () => {
    const { hall, board } = await started();
    const stream = await openEventStream(board);
    expect((await get(board, '/api/status')).dashboard.streams).toBe(1);
    // A reader that reads nothing more: its unsent bytes grow until the bus drops it.
    stream.pause();
    const big = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 400 && hall.logs.every((l) => !l.includes('subscriber dropped')); i++)
      hall.hall.bus.publish({ type: 'telegram.config_warning', bot: 'big', warning: big });
    expect(hall.logs.some((l) => l.includes('event subscriber dropped'))).toBe(true);
    stream.close();
  });
});
