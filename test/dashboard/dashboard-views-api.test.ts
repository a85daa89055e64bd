/**
 * The dashboard's views beyond the runs list, through its API on a real hall
 * with real (fake) raider processes: a cancel's escalation on the run's
 * timeline, sessions and journals, the live tree, the charts' figures.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultAdapters } from '../../src/actors/default-adapters.js';
import { dashboardAdapter } from '../../src/adapters/dashboard/dashboard-adapter.js';
import { FakeBotApi } from '../telegram/fake-bot-api.js';
import { eventually, runStarted, startTestHall, type Json, type TestHall } from '../support/test-hall.js';
import { boardOf, startBoardHall, type Board } from './dashboard-support.js';
import { apiGet as get, apiPost as post } from './dashboard-support.js';
import { startScriptedHall } from './scripted-hall.js';

const halls: TestHall[] = [];
afterEach(async () => {
  for (const hall of halls.splice(0)) await hall.stop();
});

async function started(config = 'dashboard: { listen: "127.0.0.1:0" }\n'): Promise<{ hall: TestHall; board: Board }> {
  const s = await startBoardHall(config);
  halls.push(s.hall);
  return s;
}

describe('a run page timeline', () => {
  it('shows each step of a cancel that escalates: SIGINT, SIGTERM a grace later, SIGKILL, then the end', async () => {
    const { hall, board } = await started('cancel_grace: 0.3\ndashboard: { listen: "127.0.0.1:0" }\n');
    const events = await hall.events('raider.');
    try {
      // deaf: the raider ignores SIGINT and SIGTERM, so only SIGKILL ends it.
      const run = await post(board, '/api/spawn', { name: 'bjorn', mission: 'deaf 30' });
      await runStarted(run.events_path);
      expect(await post(board, `/api/runs/${run.id}/cancel`, {})).toMatchObject({ cancelled: 1 });
      await events.waitFor((e) => e.type === 'raider.done' && e.id === run.id);
      const signals = events.all.filter((e) => e.type === 'raider.signal' && e.id === run.id);
      expect(signals.map((e) => e.signal)).toEqual(['SIGINT', 'SIGTERM', 'SIGKILL']);
      expect(signals[0]).toMatchObject({ slot: 'bjorn', pid: run.pid });

      const detail = await get(board, `/api/runs/${run.id}`);
      const timeline: Json[] = detail.timeline;
      expect(timeline.map((e) => (e.type === 'raider.signal' ? e.signal : e.type))).toEqual([
        'raider.spawned',
        'dashboard.cancel',
        'SIGINT',
        'SIGTERM',
        'SIGKILL',
        'raider.done',
      ]);
      const at = (signal: string) => timeline.find((e) => e.signal === signal)?.time ?? Number.NaN;
      // Each escalation waits out cancel_grace (0.3 s); the clock's milliseconds may round down.
      expect(at('SIGTERM') - at('SIGINT')).toBeGreaterThanOrEqual(0.29);
      expect(at('SIGKILL') - at('SIGTERM')).toBeGreaterThanOrEqual(0.29);
      // A raider killed by SIGKILL leaves no result: the end says so, and that the hall escalated.
      expect(timeline.at(-1)).toMatchObject({
        type: 'raider.done',
        status: 'failed',
        signaled: 1,
        cancel_requested: true,
        error: expect.stringMatching(/killed by signal 9/),
      });
    } finally {
      events.close();
    }
  });
});

async function scriptedHall(): Promise<{ hall: TestHall; board: Board }> {
  const s = await startScriptedHall();
  halls.push(s.hall);
  return s;
}

describe('GET /api/sessions and /api/sessions/ID', () => {
  it('lists bindings with their sessions and every journal; reads one journal: messages, tool calls, permission decisions', async () => {
    const { hall, board } = await scriptedHall();
    const events = await hall.events('raider.done');
    let done: Json;
    try {
      const run = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'look around <b>here</b>' });
      done = await events.waitFor((e) => e.id === run.id);
    } finally {
      events.close();
    }
    expect(done).toMatchObject({ status: 'completed', session: expect.any(String), binding: 'slot:1bjorn' });

    const list = await get(board, '/api/sessions');
    expect(list.bindings).toEqual([expect.objectContaining({ binding: 'slot:1bjorn', session: done.session })]);
    expect(list.journals).toEqual([expect.objectContaining({ session: done.session, binding: 'slot:1bjorn', bytes: expect.any(Number) })]);

    const journal = await get(board, `/api/sessions/${done.session}`);
    expect(journal).toMatchObject({ status: 200, session: done.session, binding: 'slot:1bjorn', truncated: false });
    const entries: Json[] = journal.entries;
    expect(entries.map((e) => e.type)).toEqual(
      expect.arrayContaining(['session.created', 'run.started', 'message', 'tool.call', 'tool.result', 'permission']),
    );
    expect(entries.find((e) => e.type === 'message' && e.role === 'user')?.content).toBe('look around <b>here</b>');
    expect(entries.find((e) => e.type === 'tool.call')).toMatchObject({ name: 'list_dir' });
    expect(entries.find((e) => e.type === 'permission')).toMatchObject({ name: 'bash', decision: 'refused' });
    expect(entries.find((e) => e.type === 'message' && e.role === 'assistant')?.content).toBe('I looked: look around <b>here</b>');

    expect((await get(board, '/api/sessions/20990101-000000-abcd')).status).toBe(404);
    expect((await get(board, `/api/sessions/${encodeURIComponent('../../etc/passwd')}`)).status).toBe(404);
  });
});

describe('GET /api/tree', () => {
  it('gives slots and binding queues with their running run and waiting missions in order, cron next times, bot health, ACP', async () => {
    const api = await FakeBotApi.start(['12345:good']);
    try {
      const hall = await startTestHall({
        config: [
          'raiders: { bjorn: {} }',
          'cron:',
          "  - { id: newyear, name: bjorn, cron: '0 0 1 1 *', tz: UTC, mission: 'answer happy new year' }",
          'telegram:',
          `  api_root: ${api.url}`,
          '  bots:',
          "    ops: { token: '12345:good', allowlist: [42], routing: { '*': bjorn } }",
          "    revoked: { token: '777:revoked', allowlist: [42], routing: { '*': bjorn } }",
          'dashboard: { listen: "127.0.0.1:0" }',
          '',
        ].join('\n'),
        adapters: defaultAdapters,
      });
      halls.push(hall);
      const board = await boardOf(hall.root);
      const running = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 30' });
      await runStarted(running.events_path);
      await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer second' });
      await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer <i>third</i>' });

      const tree = await eventually(async () => {
        const t = await get(board, '/api/tree');
        // The revoked bot has failed its first poll.
        expect(t.telegram.find((b: Json) => b.bot === 'revoked')?.failures).toBeGreaterThan(0);
        return t;
      });
      expect(tree.hall).toMatchObject({ root: hall.root, pid: process.pid, running: 1 });
      const slot = tree.queues.find((q: Json) => q.kind === 'slot' && q.name === '1bjorn');
      expect(slot.runs).toEqual([expect.objectContaining({ id: running.id, pid: running.pid, mission: 'wait 30', questions: [] })]);
      // One hall on files has no cluster: no hall ids anywhere, and /api/cluster says so.
      expect(slot.runs[0]).not.toHaveProperty('hall');
      expect(tree.hall).not.toHaveProperty('id');
      expect(await get(board, '/api/cluster')).toEqual({ status: 200, shared: false, hall: null, halls: [] });
      expect((await get(board, '/api/runs')).runs.find((r: Json) => r.id === running.id)).not.toHaveProperty('hall');
      expect(slot.waiting.map((m: Json) => [m.position, m.mission])).toEqual([
        [1, 'answer second'],
        [2, 'answer <i>third</i>'],
      ]);
      const [job] = tree.cron;
      expect(job).toMatchObject({ id: 'newyear', name: 'bjorn', cron: '0 0 1 1 *' });
      expect(new Date(job.next).getUTCMonth()).toBe(0);
      expect(Date.parse(job.next)).toBeGreaterThan(Date.now());
      expect(tree.telegram.find((b: Json) => b.bot === 'ops')).toMatchObject({ failures: 0 });
      expect(tree.telegram.find((b: Json) => b.bot === 'revoked')).toMatchObject({
        state: 'retrying',
        last_error: expect.objectContaining({ status: 401 }),
      });
      expect(tree.acp).toMatchObject({ sessions: 0 });
    } finally {
      await api.close();
    }
  });
});

describe('GET /api/charts', () => {
  it('counts runs per minute and by outcome, durations per raider, queue depth and waits, usage per day, and keeps them across a restart', async () => {
    const config = 'raiders: { bjorn: {}, ivar: {} }\ndashboard: { listen: "127.0.0.1:0" }\n';
    const { hall, board } = await started(config);
    const events = await hall.events('raider.done');
    try {
      // 1ivar runs one at a time: the second and third wait, so the queue depth goes 0 → 2 → 0.
      const first = await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'wait 1' });
      await runStarted(first.events_path);
      await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'answer two' });
      await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'fail three' });
      for (const mission of ['answer a', 'answer b', 'fail c']) await hall.request({ cmd: 'spawn', name: 'bjorn', mission });
      await eventually(() => expect(events.all.length).toBe(6), 20_000);
    } finally {
      events.close();
    }
    const check = async (b: Board) => {
      const charts = await get(b, '/api/charts?minutes=60');
      expect(charts).toMatchObject({ status: 200, minutes: 60 });
      const sum = (outcome: string) => (charts.runs_per_minute[outcome] as number[]).reduce((a, n) => a + n, 0);
      expect([sum('completed'), sum('failed'), sum('cancelled'), sum('interrupted')]).toEqual([4, 2, 0, 0]);
      expect(charts.runs_per_minute.minute.every((m: number) => m % 60 === 0)).toBe(true);
      const ivar = charts.durations.find((d: Json) => d.raider === 'ivar');
      expect(charts.durations.map((d: Json) => [d.raider, d.runs])).toEqual([
        ['bjorn', 3],
        ['ivar', 3],
      ]);
      expect(ivar.p90).toBeGreaterThanOrEqual(ivar.median);
      expect(charts.outcomes).toEqual({ completed: 4, failed: 2, cancelled: 0, interrupted: 0, other: 0 });
      // The second and third 1ivar missions waited for the first; the others started at once.
      expect(charts.queue_wait).toEqual([{ slot: '1ivar', runs: 2, median: expect.any(Number), p90: expect.any(Number) }]);
      expect(charts.queue_wait[0].median).toBeGreaterThan(0);
      expect(charts.queue_wait[0].p90).toBeGreaterThanOrEqual(charts.queue_wait[0].median);
      // The fake raider reports no usage: the runs are counted, their tokens are not.
      const today = new Date().toISOString().slice(0, 10);
      expect(charts.days).toBe(7);
      expect(charts.usage).toEqual([
        { day: today, raider: 'bjorn', runs: 3, reported: 0, tokens: 0, cost: {} },
        { day: today, raider: 'ivar', runs: 3, reported: 0, tokens: 0, cost: {} },
      ]);
      return charts;
    };
    await check(board);
    // The samples come at most once a second: wait for the queue to be seen empty again.
    const depths = await eventually(async () => {
      const d: number[] = (await get(board, '/api/charts')).queue_depth.depth;
      expect(d.at(-1)).toBe(0);
      expect(Math.max(...d)).toBeGreaterThanOrEqual(1);
      return d;
    }, 10_000);
    expect(depths[0]).toBe(0);

    await hall.stop();
    halls.splice(0);
    const again = await startTestHall({ root: hall.root, adapters: [dashboardAdapter] });
    halls.push(again);
    const restarted = await boardOf(again.root);
    const after = await check(restarted);
    expect(after.queue_depth.depth.slice(0, depths.length)).toEqual(depths);
    expect((await get(restarted, '/api/charts?minutes=0')).status).toBe(400);
    expect((await get(restarted, '/api/charts?days=91')).status).toBe(400);
  });
});
