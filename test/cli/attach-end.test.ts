/**
 * `spawn --attach` and `attach` say how the run ended and exit like the
 * built-in raider: 0 completed, 1 failed, 130 cancelled, 143 interrupted;
 * `attach` of an ended run replays it from its files; Ctrl-C detaches and
 * says how to cancel the run, which goes on (issue 14, items 5 and 19).
 */
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  doneOf,
  hall,
  hallLive,
  raiderStarted,
  removeRoots,
  request,
  socketOf,
  doneTap,
  hallForFile,
  hallRoot,
  startHallProcess,
} from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const SPAWNED_ID = /^Spawned raider (\S+) \(PID \d+\)/m;

const file = hallForFile('raiders:\n  bjorn: {}\ncancel_grace: 0.3\n');

/** A `spawn --attach` of a run that waits, once its raider is running; with the run's id. */
async function attachedWaiting(): Promise<{ live: ReturnType<typeof hallLive>; id: string }> {
  const live = hallLive(['spawn', '--attach', 'bjorn', 'wait', '600'], file.root);
  await live.printed('· run started (fake)\n');
  const id = SPAWNED_ID.exec(live.stderr())?.[1] ?? '';
  await raiderStarted(file.root, id);
  return { live, id };
}

describe.concurrent('spawn --attach', () => {
  it('a failed run: its error on stderr, exit 1', async () => {
    const r = await hall(['spawn', '--attach', 'bjorn', 'fail', 'the', 'roof', 'leaks'], file.root);
    const id = SPAWNED_ID.exec(r.stderr)?.[1] ?? '';
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`run ${id} ended: failed: the roof leaks\n`);
  });

  it('a run that ended without a result: the hall says so, exit 1', async () => {
    const r = await hall(['spawn', '--attach', 'bjorn', 'crash'], file.root);
    const id = SPAWNED_ID.exec(r.stderr)?.[1] ?? '';
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`run ${id} ended: failed: raider ${id} ended without a result (exit code 3)\n`);
  });

  it('a cancelled run exits 130, an interrupted one 143', async () => {
    const [cancelled, killed] = await Promise.all([attachedWaiting(), attachedWaiting()]);
    expect(await request(socketOf(file.root), { cmd: 'cancel', id: cancelled.id })).toEqual({ cancelled: 1, id: cancelled.id });
    expect(await request(socketOf(file.root), { cmd: 'kill', id: killed.id })).toEqual({ killed: 1, id: killed.id });
    const [c, k] = await Promise.all([cancelled.live.done, killed.live.done]);
    expect(c.code).toBe(130);
    expect(c.stderr).toContain(`run ${cancelled.id} ended: cancelled\n`);
    expect(k.code).toBe(143);
    expect(k.stderr).toContain(`run ${killed.id} ended: interrupted\n`);
  });

  it('Ctrl-C detaches: the run goes on, and the message says how to cancel it', async () => {
    const { live, id } = await attachedWaiting();
    live.signal('SIGINT');
    const r = await live.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain(`run ${id} goes on`);
    expect(r.stderr).toContain(`raider hall cancel ${id}`);
    const ps = await request(socketOf(file.root), { cmd: 'ps' });
    expect(JSON.stringify(ps)).toContain(id);
    await request(socketOf(file.root), { cmd: 'cancel', id });
    expect(await doneOf(file.tap, id)).toMatchObject({ status: 'cancelled' });
  });
});

describe.concurrent('attach of a run that has ended', () => {
  it('replays it and says how it ended, with its exit code', async () => {
    const spawned = await request(socketOf(file.root), { cmd: 'spawn', name: 'bjorn', mission: 'wait 600' });
    const id = String(spawned.id);
    await raiderStarted(file.root, id);
    await request(socketOf(file.root), { cmd: 'cancel', id });
    await doneOf(file.tap, id);
    const r = await hall(['attach', id], file.root);
    expect(r).toMatchObject({ code: 130, stdout: '· run started (fake)\n■ cancelled\n', stderr: `run ${id} ended: cancelled\n` });
  });
});

describe('attach without a hall', () => {
  it('replays an ended run from its files after the hall has stopped', async () => {
    const own = hallRoot('raiders:\n  bjorn: {}\n');
    const ownHall = await startHallProcess(own);
    const ownTap = await doneTap(own);
    const run = await request(socketOf(own), { cmd: 'spawn', name: 'bjorn', mission: 'fail no luck' });
    await doneOf(ownTap, String(run.id));
    ownTap.close();
    expect((await ownHall.stop()).code).toBe(0);
    const r = await hall(['attach', String(run.id)], own);
    expect(r).toMatchObject({
      code: 1,
      stdout: '· run started (fake)\n■ failed: no luck\n',
      stderr: `run ${run.id} ended: failed: no luck\n`,
    });
    // An id with no files is still "not running".
    const unknown = await hall(['attach', 'bjorn-1'], own);
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'Hall not running (no socket found)\n' });
  });
});

describe('a raider that exits without a result', () => {
  it('shows what the raider said, e.g. that no engine is configured', async () => {
    // The real raider, with nothing in the environment that would choose an engine.
    const real = hallRoot('raiders:\n  bjorn: {}\n');
    const env = {
      RAIDER_HALL_RAIDER_BIN: path.resolve('bin/raider'),
      OPENAI_API_KEY: undefined,
      ANTHROPIC_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
      ANTHROPIC_BASE_URL: undefined,
      HOME: real,
    };
    const own = await startHallProcess(real, env);
    try {
      const r = await hall(['spawn', '--attach', 'bjorn', 'hello'], real);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^raider bjorn-\S+: no engine configured/m);
      // The hall's entry is what gives the run its engine: its key and file, with the real path.
      expect(r.stderr).toContain(`raiders.bjorn.engine in ${path.join(real, '.raider-hall.yml')}`);
      expect(r.stderr).not.toContain('<root>');
      expect(r.stderr).toMatch(/ended: failed: .*exit code 3/);
    } finally {
      await own.stop();
    }
  });
});
