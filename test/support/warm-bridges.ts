/**
 * A hall's warm ACP bridges as `status` shows them (`warm_bridges`,
 * docs/agents.md "Warm bridges"), for the tests of a hall that keeps some;
 * and a pool of them with the hall's own spawner, for the tests of the pool itself.
 */
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { expect } from 'vitest';
import type { SpawnRequest, SpawnWatcher } from '../../src/adapters/os/fork-server.js';
import { HallSpawner } from '../../src/adapters/os/hall-spawner.js';
import { processAlive } from '../../src/adapters/os/process-alive.js';
import { resolveAcpBridgeCommand } from '../../src/actors/raider-command.js';
import { type HandOverRequest, type SpareSpawner, type SpareStatus, WarmBridges } from '../../src/actors/warm-bridges.js';
import { eventually, request, SCRIPTED_ACP_AGENT } from './hall-client.js';

/** One warm bridge of an entry, as `status` lists it. */
export type WarmSpare = SpareStatus;

/** The unused warm bridges of `entry` (default `warm`) of the hall in `root`. */
export async function warmSpares(root: string, entry = 'warm'): Promise<WarmSpare[]> {
  const status = await request(path.join(root, '.raider-hall.socket'), { cmd: 'status' });
  return (status.warm_bridges as Record<string, WarmSpare[]> | undefined)?.[entry] ?? [];
}

/** The pid of the entry's ready warm bridge (other than `not`), once there is one. */
export async function readySpare(root: string, not?: number, entry = 'warm'): Promise<number> {
  let pid = 0;
  await eventually(
    async () => {
      const ready = (await warmSpares(root, entry)).find((s) => s.ready && s.pid !== null && s.pid !== not);
      expect(ready).toBeDefined();
      pid = ready?.pid ?? 0;
    },
    30_000,
    20,
  );
  return pid;
}

/** The hall's own spawner, which warm bridges need: a machine without posix_spawn fails the test saying so. */
export function hallSpawner(): HallSpawner {
  const loaded = HallSpawner.load();
  if (typeof loaded === 'string') throw new Error(`this machine has no posix_spawn for the hall: ${loaded}`);
  return loaded;
}

/**
 * The warm bridges of one entry `warm` (one kept, `idleS` idle, 600 s unless said) in `root`, the real
 * bridge started through `spawner`; what the pool logs goes to `log`.
 */
export function oneWarmEntry(
  spawner: SpareSpawner,
  root: string,
  options: { idleS?: number; log?: (line: string) => void } = {},
): WarmBridges {
  return new WarmBridges({
    spawner,
    bridge: resolveAcpBridgeCommand(process.env),
    baseEnv: process.env,
    root,
    logDir: root,
    entries: [{ entry: 'warm', keep: 1, idleS: options.idleS ?? 600 }],
    log: options.log ?? (() => undefined),
  });
}

/**
 * The hall's own spawner with each exit report held until the test lets it
 * through (`held`), the pids it started and when each start was asked for:
 * the pool then hears of a bridge's end only as the test allows.
 */
export function holdingSpawner(
  spawner: HallSpawner,
): SpareSpawner & { pids: number[]; held: Array<() => void>; spawnedAt: number[]; closeWith(bridges: WarmBridges): Promise<void> } {
  const pids: number[] = [];
  const held: Array<() => void> = [];
  const spawnedAt: number[] = [];
  return {
    pids,
    held,
    spawnedAt,
    /** The test's end: the pool closed, every held exit let through, each bridge gone, the spawner closed. */
    async closeWith(bridges: WarmBridges): Promise<void> {
      bridges.close();
      for (const report of held.splice(0)) report();
      await eventually(() => expect(pids.filter(processAlive)).toEqual([]), 10_000, 20);
      await spawner.close();
    },
    spawn(request: SpawnRequest, watcher: SpawnWatcher): () => void {
      spawnedAt.push(Date.now());
      return spawner.spawn(request, {
        ...watcher,
        spawned: (pid, stdin) => {
          pids.push(pid);
          watcher.spawned(pid, stdin);
        },
        exited: (code, signal) => held.push(() => watcher.exited(code, signal)),
      });
    },
  };
}

/** What a spawner stand-in around the real one saw: each start asked for, each pid and stdin it got, each exit. */
export interface SeenSpawns {
  /** How many starts were asked for, counted as they are asked (synchronously). */
  asked: number;
  pids: number[];
  stdins: Map<number, Duplex>;
  exited: Set<number>;
}

/** The hall's real spawner, seen: what `spawner` starts and reports, recorded in `seen` as it passes. */
export function seenSpawner(spawner: SpareSpawner): { spawner: SpareSpawner; seen: SeenSpawns } {
  const seen: SeenSpawns = { asked: 0, pids: [], stdins: new Map(), exited: new Set() };
  return {
    seen,
    spawner: {
      spawn(request, watcher) {
        seen.asked++;
        let started = 0;
        return spawner.spawn(request, {
          ...watcher,
          spawned: (pid, stdin) => {
            started = pid;
            seen.pids.push(pid);
            if (stdin !== undefined) seen.stdins.set(pid, stdin);
            watcher.spawned(pid, stdin);
          },
          exited: (code, signal) => {
            seen.exited.add(started);
            watcher.exited(code, signal);
          },
        });
      },
    },
  };
}

/** The hand-over of run `runId` of mission `mission` to a warm bridge of the scripted ACP agent, its files in `root`. */
export function scriptedRunRequest(root: string, runId: string, mission: string): HandOverRequest {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return {
    command: process.execPath,
    args: [],
    env,
    cwd: root,
    stdoutPath: path.join(root, `${runId}.events.jsonl`),
    stderrPath: path.join(root, 'warm.log'),
    runId,
    bridgeArgs: ['--stream-json', '--agent-command', SCRIPTED_ACP_AGENT, '--', mission],
  };
}

/** A run's watcher that says in `told` what it was told, one line each. */
export function tellingWatcher(told: string[]): SpawnWatcher {
  return {
    spawned: (p) => told.push(`spawned ${p}`),
    failed: (e) => told.push(`failed ${e}`),
    exited: (code, signal) => told.push(`exited ${code} ${signal}`),
    lost: () => {},
  };
}
