/**
 * The client commands of `raider hall` against a real hall process:
 * status, ps, spawn, attach, kill, cancel, logs,
 * session reset. One hall per describe; every test waits until its runs end.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventTap } from '../support/test-hall.js';
import {
  doneOf,
  doneTap,
  eventsFile,
  hall,
  hallLive,
  type HallProcess,
  hallRoot,
  idle,
  raiderStarted,
  removeRoots,
  request,
  socketOf,
  spawned,
  startHallProcess,
} from './cli-helpers.js';

// Every command is a whole node process: on a busy machine they take a while.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

/** The describes run side by side (each has its own hall); the tests of one describe run in order. */
const step = it.sequential;

const CONFIG = 'raiders:\n  bjorn: {}\ncancel_grace: 0.3\n';

/** A hall for the describe it is called in, and a raider.done tap on it. */
function sharedHall(): { root: string; tap: () => EventTap } {
  const ctx = { root: '', h: undefined as HallProcess | undefined, tap: undefined as EventTap | undefined };
  beforeAll(async () => {
    ctx.root = hallRoot(CONFIG);
    ctx.h = await startHallProcess(ctx.root);
    ctx.tap = await doneTap(ctx.root);
  });
  afterAll(async () => {
    ctx.tap?.close();
    const exit = await ctx.h?.stop();
    expect(exit?.code).toBe(0);
  });
  return {
    get root() {
      return ctx.root;
    },
    tap: () => ctx.tap!,
  };
}

describe.concurrent('status and ps', () => {
  const s = sharedHall();

  step('describe an idle hall', async () => {
    const [status, json, ps, psJson] = await Promise.all([
      hall(['status'], s.root),
      hall(['status', '--json'], s.root),
      hall(['ps'], s.root),
      hall(['ps', '--json'], s.root),
    ]);
    // The person view starts with the root and the running count; more sections (cron, ACP, ...) may follow.
    expect(status).toMatchObject({ code: 0, stderr: '' });
    expect(status.stdout.startsWith(`Hall ${s.root}\n0 running\n`)).toBe(true);
    expect(json.code).toBe(0);
    // Pretty JSON followed by one more newline.
    expect(json.stdout).toMatch(/^\{\n {2}"[\s\S]*\n\}\n\n$/);
    expect(JSON.parse(json.stdout)).toMatchObject({ running: 0, root: s.root, slots: [] });
    expect(ps).toMatchObject({ code: 0, stdout: 'No running raiders.\n', stderr: '' });
    expect(psJson.code).toBe(0);
    expect(JSON.parse(psJson.stdout)).toEqual({ raiders: [] });
  });

  step('list running raiders and waiting missions', async () => {
    // Long enough to outlive four CLI calls on a busy machine; killed below.
    const a = await request(socketOf(s.root), { cmd: 'spawn', name: 'bjorn', mission: 'wait 600' });
    const b = await request(socketOf(s.root), { cmd: 'spawn', name: '1bjorn', mission: 'wait 600' });
    const c = await request(socketOf(s.root), { cmd: 'spawn', name: '1bjorn', mission: 'answer later' });
    expect(c).toMatchObject({ queued: 1, queue_depth: 1 });
    const [status, json, ps, psJson] = await Promise.all([
      hall(['status'], s.root),
      hall(['status', '--json'], s.root),
      hall(['ps'], s.root),
      hall(['ps', '--json'], s.root),
    ]);

    const st = JSON.parse(json.stdout);
    expect(st).toMatchObject({ running: 2, root: s.root, slots: ['1bjorn', 'bjorn'], queues: { '1bjorn': 1 } });

    expect(status.code).toBe(0);
    const text = status.stdout;
    expect(text.startsWith(`Hall ${s.root}\n2 running in 1bjorn, bjorn\n`)).toBe(true);
    expect(text).toContain(a.id);
    expect(text).toContain(b.id);
    expect(text).toMatch(new RegExp(`\nslot 1bjorn +1 +${c.mission_id}\n`));

    expect(ps.code).toBe(0);
    const lines = ps.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SLOT {7}PID {6}BASE_NAME\b/);
    expect(lines).toHaveLength(3);
    // slot padded to 10, a space, pid padded to 8, a space, the base name.
    const row = (slot: string, pid: number, base: string) => `${slot.padEnd(10)} ${String(pid).padEnd(8)} ${base}`;
    const rows = lines.slice(1);
    expect(rows.find((l) => l.startsWith(row('bjorn', a.pid, 'bjorn ')))).toBeDefined();
    expect(rows.find((l) => l.startsWith(row('1bjorn', b.pid, 'bjorn ')))).toBeDefined();

    expect(psJson.code).toBe(0);
    const raiders = JSON.parse(psJson.stdout).raiders as Array<Record<string, unknown>>;
    expect(raiders.map((r) => [r.slot, r.pid, r.base_name, r.id]).sort()).toEqual(
      [
        ['1bjorn', b.pid, 'bjorn', b.id],
        ['bjorn', a.pid, 'bjorn', a.id],
      ].sort(),
    );
    await Promise.all([a, b].map((r) => raiderStarted(s.root, r.id)));
    for (const r of [a, b]) expect(await request(socketOf(s.root), { cmd: 'kill', id: r.id })).toEqual({ killed: 1, id: r.id });
    await s.tap().waitFor((e) => e.response === 'later', 60_000);
    await idle(s.root);
  });
});

describe.concurrent('spawn and attach', () => {
  const s = sharedHall();

  step('spawns with the mission words joined by spaces', async () => {
    const r = await hall(['spawn', 'bjorn', 'answer', 'hello', 'brave  new', 'world'], s.root);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const run = spawned(r.stdout);
    expect(run.slot).toBe('bjorn');
    expect(run.id).toMatch(/^bjorn-\d+(\.\d+)?$/);
    const done = await doneOf(s.tap(), run.id);
    expect(done).toMatchObject({ status: 'completed', response: 'hello brave  new world', pid: run.pid });
  });

  step('queues a mission for a busy numbered slot, and does not attach to it', async () => {
    // The first one keeps the slot busy until it is killed below.
    const first = await request(socketOf(s.root), { cmd: 'spawn', name: '1bjorn', mission: 'wait 600' });
    expect(first).toMatchObject({ slot: '1bjorn', pid: expect.any(Number) });
    const queued = await hall(['spawn', '1bjorn', 'answer', 'second'], s.root);
    expect(queued).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^Mission m[0-9a-z]+-[0-9a-f]{12} queued for 1bjorn, position 1\.\n$/),
      stderr: '',
    });
    const attached = await hall(['spawn', '--attach', '1bjorn', 'answer', 'third'], s.root);
    expect(attached).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^Mission m\S+ queued for 1bjorn, position 2\.\n$/),
      stderr: 'Not attached: the mission has no run yet.\n',
    });
    await raiderStarted(s.root, first.id);
    expect(await request(socketOf(s.root), { cmd: 'kill', id: first.id })).toEqual({ killed: 1, id: first.id });
    await s.tap().waitFor((e) => e.response === 'third', 60_000);
    const order = s
      .tap()
      .all.filter((e) => e.slot === '1bjorn')
      .map((e) => e.response);
    expect(order).toEqual([undefined, 'second', 'third']);
  });

  step('spawn --attach prints the Spawned line on stderr and the run on stdout until it ends', async () => {
    const r = await hall(['spawn', '--attach', 'bjorn', 'answer', 'hi', 'there'], s.root);
    expect(r.code).toBe(0);
    const run = spawned(r.stderr);
    expect(r.stdout).toBe('· run started (fake)\nhi there\n■ completed\n');
    await doneOf(s.tap(), run.id);
  });

  step("spawn --json prints the hall's reply as JSON", async () => {
    const r = await hall(['spawn', '--json', 'bjorn', 'answer', 'as json'], s.root);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const reply = JSON.parse(r.stdout) as { id: string; pid: number; slot: string };
    expect(reply).toMatchObject({ id: expect.stringMatching(/^bjorn-/), pid: expect.any(Number), slot: 'bjorn' });
    await doneOf(s.tap(), reply.id);
  });

  step('spawn --attach --json prints exactly the events file', async () => {
    const r = await hall(['spawn', 'bjorn', 'answer', 'raw', '--attach', '--json'], s.root);
    expect(r.code).toBe(0);
    const run = spawned(r.stderr);
    await doneOf(s.tap(), run.id);
    const file = fs.readFileSync(eventsFile(s.root, run.id), 'utf8');
    expect(r.stdout).toBe(file);
    const events = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'run.state', 'message', 'run.state', 'run.finished']);
    expect(events.at(-1)).toMatchObject({ status: 'completed', response: 'raw' });
  });

  step('attach and attach --json follow a running run until it ends', async () => {
    const spawn = () => request(socketOf(s.root), { cmd: 'spawn', name: 'bjorn', mission: 'wait 600' });
    const [a, b] = await Promise.all([spawn(), spawn()]);
    await Promise.all([raiderStarted(s.root, a.id), raiderStarted(s.root, b.id)]);
    const la = hallLive(['attach', a.id], s.root);
    const lb = hallLive(['attach', '--json', b.id], s.root);
    // Both are attached and have printed what the runs wrote so far; the runs go on.
    await Promise.all([la.printed('· run started (fake)\n'), lb.printed('"run.started"')]);
    expect(la.stdout()).toBe('· run started (fake)\n');
    // The runs end: the attached commands print the rest and exit. Had one left early,
    // or missed the end (whether it came by the bus or by the probe), its output below would show it.
    for (const id of [a.id, b.id]) expect(await request(socketOf(s.root), { cmd: 'cancel', id })).toEqual({ cancelled: 1, id });
    const [ra, rb] = await Promise.all([la.done, lb.done]);
    // A cancelled run: its end on stderr, and the exit code of a raider that died by SIGINT.
    expect(ra).toMatchObject({ code: 130, stdout: '· run started (fake)\n■ cancelled\n', stderr: `run ${a.id} ended: cancelled\n` });
    expect(rb).toMatchObject({ code: 130, stderr: `run ${b.id} ended: cancelled\n` });
    expect(rb.stdout).toBe(fs.readFileSync(eventsFile(s.root, b.id), 'utf8'));
    expect(JSON.parse(rb.stdout.trimEnd().split('\n').at(-1)!)).toMatchObject({ type: 'run.finished', status: 'cancelled' });
    await Promise.all([doneOf(s.tap(), a.id), doneOf(s.tap(), b.id)]);
  });

  step('attach to an unknown id says raider not found and exits 1', async () => {
    const unknown = await hall(['attach', 'bjorn-1'], s.root);
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'Hall: raider not found\n' });
  });

  step('spawn of an unsafe name is refused by the hall: Hall error, exit 1', async () => {
    // A name with a `/` is taken for a DIR (dir-args.test.ts); one without is the hall's to judge.
    const unsafe = await hall(['spawn', 'x.y', 'answer', 'no'], s.root);
    expect(unsafe.code).toBe(1);
    expect(unsafe.stdout).toBe('');
    expect(unsafe.stderr).toMatch(/^Hall error: .*x\.y/);
    await idle(s.root);
  });
});

describe.concurrent('kill, cancel, logs and session reset', () => {
  const s = sharedHall();

  step('kill ends a run interrupted; cancel ends one cancelled', async () => {
    const spawn = () => request(socketOf(s.root), { cmd: 'spawn', name: 'bjorn', mission: 'wait 600' });
    const [k, c] = await Promise.all([spawn(), spawn()]);
    await Promise.all([raiderStarted(s.root, k.id), raiderStarted(s.root, c.id)]);
    const [killed, cancelled] = await Promise.all([hall(['kill', k.id], s.root), hall(['cancel', c.id], s.root)]);
    expect(killed).toMatchObject({ code: 0, stdout: `Killed raider ${k.id}.\n`, stderr: '' });
    expect(cancelled).toMatchObject({ code: 0, stdout: `Cancelling raider ${c.id}.\n`, stderr: '' });
    expect(await doneOf(s.tap(), k.id)).toMatchObject({ status: 'interrupted', signaled: 1 });
    expect(await doneOf(s.tap(), c.id)).toMatchObject({ status: 'cancelled', signaled: 1 });
  });

  step('kill, cancel and logs of an unknown id say raider not found and exit 1', async () => {
    const results = await Promise.all([
      hall(['kill', 'bjorn-1'], s.root),
      hall(['cancel', 'nope-1'], s.root),
      hall(['logs', 'bjorn-1'], s.root),
    ]);
    for (const r of results) expect(r).toMatchObject({ code: 1, stdout: '', stderr: 'Hall: raider not found\n' });
  });

  step('logs shows a running and an ended run; logs --follow prints until the result line', async () => {
    const run = await request(socketOf(s.root), { cmd: 'spawn', name: 'bjorn', mission: 'wait 600' });
    await raiderStarted(s.root, run.id);
    const started = `[hall] raider ${run.id} started\n`;
    // Never an empty reason after the colon.
    const result = `[hall] raider ${run.id} cancelled: cancelled on request\n`;
    const live = await hall(['logs', run.id], s.root);
    expect(live).toMatchObject({ code: 0, stdout: started, stderr: '' });
    const follow = hallLive(['logs', '--follow', run.id], s.root);
    await follow.printed(started);
    expect(follow.stdout()).toBe(started);
    // Whether the end reaches it by the bus or by its probe, it prints up to the result line and no further.
    expect(await request(socketOf(s.root), { cmd: 'cancel', id: run.id })).toEqual({ cancelled: 1, id: run.id });
    expect(await follow.done).toMatchObject({ code: 0, stdout: started + result, stderr: '' });
    await doneOf(s.tap(), run.id);
    const ended = await hall(['logs', run.id], s.root);
    expect(ended).toMatchObject({ code: 0, stdout: started + result, stderr: '' });
  });

  step('session reset starts a numbered slot over', async () => {
    const first = await request(socketOf(s.root), { cmd: 'spawn', name: '1bjorn', mission: 'answer one' });
    const done = await doneOf(s.tap(), first.id);
    expect(done.session).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/);
    const reset = await hall(['session', 'reset', 'slot:1bjorn'], s.root);
    expect(reset).toMatchObject({
      code: 0,
      stdout: `Binding slot:1bjorn reset: its next mission starts a new session (the old one, ${done.session}, is kept).\n`,
      stderr: '',
    });
    const [again, unknown] = await Promise.all([
      hall(['session', 'reset', 'slot:1bjorn'], s.root),
      hall(['session', 'reset', 'slot:2nobody'], s.root),
    ]);
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: 'Hall: no session bound to slot:1bjorn\n' });
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'Hall: no session bound to slot:2nobody\n' });
    // The next mission of the slot gets a new session.
    const next = await request(socketOf(s.root), { cmd: 'spawn', name: '1bjorn', mission: 'answer two' });
    const nextDone = await doneOf(s.tap(), next.id);
    expect(nextDone.session).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/);
    expect(nextDone.session).not.toBe(done.session);
  });
});
