/**
 * The warm-bridge pool's timed paths (docs/agents.md, "Warm bridges"), on a
 * simulated clock: a taken bridge never handed a run is ended after 60 s, a
 * taken bridge's replacement starts 2 s after the take (not before, and once
 * only however its run ends), an unused ready bridge is ended after
 * `warm_idle` and replaced. Only the pool's own timers are simulated
 * (setTimeout and clearTimeout): the hall's real spawner starts real bridges,
 * whose I/O, exits (SIGCHLD) and setImmediate turns go on as in a hall; the
 * test waits for them on real time (`eventually`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WarmBridges } from '../../src/actors/warm-bridges.js';
import type { HallSpawner } from '../../src/adapters/os/hall-spawner.js';
import { alive, eventually, removeRoots, tempRoot } from '../cli/cli-helpers.js';
import { runStarted } from '../support/hall-client.js';
import { groupAlive } from '../support/processes.js';
import { hallSpawner, oneWarmEntry, type SeenSpawns, scriptedRunRequest, seenSpawner, tellingWatcher } from '../support/warm-bridges.js';

afterAll(() => removeRoots());

let real: HallSpawner;
let bridges: WarmBridges | undefined;
let seen: SeenSpawns;
let logged: string[];

/** A pool of one entry kept warm (`idleS` idle) through the real spawner, started with the clock simulated. */
function startPool(root: string, idleS = 600): WarmBridges {
  const seeing = seenSpawner(real);
  seen = seeing.seen;
  logged = [];
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  bridges = oneWarmEntry(seeing.spawner, root, { idleS, log: (line) => logged.push(line) });
  bridges.start();
  return bridges;
}

/** The entry's one ready bridge, once it is ready. */
async function readyPid(pool: WarmBridges): Promise<number> {
  const [spare] = await eventually(() => {
    const warm = pool.status().warm_bridges.warm ?? [];
    expect(warm).toMatchObject([{ ready: true }]);
    return warm;
  }, 20_000);
  return spare?.pid ?? 0;
}

/** Whether the pool told the bridge `pid` to go: its stdin's end, sent synchronously as the pool ends it. */
function toldToGo(pid: number): boolean {
  return seen.stdins.get(pid)?.writableEnded ?? false;
}

/** The pool tells the bridge `pid` to go `ms` of simulated time from now, not a millisecond sooner; it is gone then. */
async function endedAfter(pid: number, ms: number): Promise<void> {
  vi.advanceTimersByTime(ms - 1);
  expect(toldToGo(pid)).toBe(false);
  vi.advanceTimersByTime(1);
  expect(toldToGo(pid)).toBe(true);
  await gone(pid);
}

/** The pool starts another bridge `ms` of simulated time from now, not a millisecond sooner. */
function startsAnotherAfter(ms: number): void {
  const asked = seen.asked;
  vi.advanceTimersByTime(ms - 1);
  expect(seen.asked).toBe(asked);
  vi.advanceTimersByTime(1);
  expect(seen.asked).toBe(asked + 1);
}

/** Takes the ready bridge `pid` and hands it run `warm-1` of `mission`: what its watcher is told, and the run's events file. */
function handRun(pool: WarmBridges, root: string, pid: number, mission: string): { told: string[]; events: string } {
  const spare = pool.take('warm');
  expect(spare).toMatchObject({ pid });
  const told: string[] = [];
  const request = scriptedRunRequest(root, 'warm-1', mission);
  expect(pool.handOver(spare?.id ?? '', request, tellingWatcher(told))).not.toBeNull();
  return { told, events: request.stdoutPath };
}

/** The bridge `pid` has exited, its exit reported to the pool, and no process of its group is left. */
async function gone(pid: number): Promise<void> {
  await eventually(() => expect(seen.exited.has(pid)).toBe(true), 10_000, 10);
  expect(alive(pid)).toBe(false);
  // Its agent, if it had one, goes with it (the pool kills what is left of its group).
  await eventually(() => expect(groupAlive(pid)).toBe(false), 10_000, 10);
}

beforeEach(() => {
  real = hallSpawner();
  bridges = undefined;
});

afterEach(async () => {
  bridges?.close();
  vi.useRealTimers();
  try {
    await eventually(() => expect(seen.pids.filter(groupAlive)).toEqual([]), 10_000, 20);
  } finally {
    // A handed bridge is its run's, which close leaves alone: one a failed check left running is killed.
    for (const pid of seen.pids) if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
    await real.close();
  }
});

describe('warm bridges on a simulated clock', () => {
  it('a taken bridge never handed a run is ended after 60 s; the pool is back to one ready bridge', async () => {
    const pool = startPool(tempRoot('warm-reserved-'));
    const pid = await readyPid(pool);
    expect(pool.take('warm')).toMatchObject({ pid });

    vi.advanceTimersByTime(2000);
    // Its replacement was started 2 s after the take.
    expect(seen.asked).toBe(2);
    await endedAfter(pid, 58_000);

    const replacement = await readyPid(pool);
    expect(replacement).not.toBe(pid);
    // Its end started no other: one kept, one there.
    expect(seen.asked).toBe(2);
    // Ended by the pool, not by itself.
    expect(logged).toEqual([]);
  }, 60_000);

  it("a taken bridge's replacement starts 2 s after the take while its run goes on, not before, and not again at the run's end", async () => {
    const root = tempRoot('warm-refill-');
    const pool = startPool(root);
    const pid = await readyPid(pool);
    // A run that goes on until this file is there.
    const go = path.join(root, 'go');
    const { told, events } = handRun(pool, root, pid, `until ${go}`);
    await runStarted(events);

    startsAnotherAfter(2000);
    const replacement = await readyPid(pool);
    expect(replacement).not.toBe(pid);
    // Another run takes the replacement: the pool has no unused bridge now.
    expect(pool.take('warm')).toMatchObject({ pid: replacement });

    // The first run ends, and its end is told: its take was replaced already, so nothing starts.
    fs.writeFileSync(go, '');
    await eventually(() => expect(told).toEqual([`spawned ${pid}`, 'exited 0 null']), 20_000, 10);
    pool.runEnded('warm-1');
    expect(seen.asked).toBe(2);
    await gone(pid);
    // The second take is replaced 2 s after it, as the first was.
    startsAnotherAfter(2000);
  }, 60_000);

  it("a taken bridge's replacement starts at once when its run's end is told within 2 s, and not again at 2 s", async () => {
    const root = tempRoot('warm-refill-end-');
    const pool = startPool(root);
    const pid = await readyPid(pool);
    const { told } = handRun(pool, root, pid, 'answer hello');
    await eventually(() => expect(told).toEqual([`spawned ${pid}`, 'exited 0 null']), 20_000, 10);

    // No simulated time has passed since the take.
    expect(seen.asked).toBe(1);
    pool.runEnded('warm-1');
    expect(seen.asked).toBe(2);
    await gone(pid);
    const replacement = await readyPid(pool);

    // Another run takes the replacement 1 s after the first take: only its own 2 s start another.
    vi.advanceTimersByTime(1000);
    expect(pool.take('warm')).toMatchObject({ pid: replacement });
    startsAnotherAfter(2000);
  }, 60_000);

  it('an unused ready bridge is ended after warm_idle and another is started in its place', async () => {
    const pool = startPool(tempRoot('warm-idle-'), 5);
    const pid = await readyPid(pool);

    await endedAfter(pid, 5000);

    expect(seen.asked).toBe(2);
    expect(await readyPid(pool)).not.toBe(pid);
    expect(logged).toEqual([]);
  }, 60_000);
});
