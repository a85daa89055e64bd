import { spawn } from 'node:child_process';
import { Duplex, PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { SpawnRequest, SpawnWatcher } from '../../src/adapters/os/fork-server.js';
import { WarmBridges } from '../../src/actors/warm-bridges.js';
import { alive, eventually, removeRoots, tempRoot } from '../cli/cli-helpers.js';
import { settle } from '../support/fake-actors.js';
import { readJsonLines } from '../support/hall-client.js';
import { hallSpawner, holdingSpawner, oneWarmEntry, scriptedRunRequest, tellingWatcher } from '../support/warm-bridges.js';

afterAll(() => removeRoots());

describe('the end of a run handed to a warm bridge', () => {
  it("is told at the bridge's word, before its exit is reported; the replacement starts once that end is told", async () => {
    const spawner = hallSpawner();
    const root = tempRoot('warm-exit-');
    const holding = holdingSpawner(spawner);
    const { held, spawnedAt } = holding;
    const bridges = oneWarmEntry(holding, root);
    bridges.start();
    try {
      await eventually(() => expect(bridges.status().warm_bridges.warm).toMatchObject([{ ready: true }]), 20_000, 10);
      const spare = bridges.take('warm');
      const takenAt = Date.now();
      expect(spare).toBeDefined();
      const run = scriptedRunRequest(root, 'warm-1', 'answer hello');
      const events = run.stdoutPath;
      const told: string[] = [];
      const handOver = bridges.handOver(spare?.id ?? '', run, tellingWatcher(told));
      expect(handOver).not.toBeNull();
      await eventually(() => expect(told).toContain('exited 0 null'), 20_000, 10);
      // Nothing reported the exit to the pool: the run heard it from the bridge.
      expect(told).toEqual([`spawned ${spare?.pid}`, 'exited 0 null']);
      const finished = readJsonLines(events).filter((e) => e.type === 'run.finished');
      expect(finished).toMatchObject([{ status: 'completed', response: 'hello' }]);
      await eventually(() => expect(alive(spare?.pid ?? 0)).toBe(false), 10_000, 10);

      // Its exit, reported now, tells the run nothing more.
      await eventually(() => expect(held).toHaveLength(1), 10_000, 10);
      held.shift()?.();
      // What it would tell goes through the run's stderr copy, a few turns later.
      await settle();
      expect(told).toHaveLength(2);

      // The replacement: not before the run's end is told, unless the take was long enough ago.
      const endedAt = Date.now();
      bridges.runEnded('warm-1');
      expect(bridges.status().warm_bridges.warm).toHaveLength(1);
      expect(spawnedAt).toHaveLength(2);
      const refilledAt = spawnedAt[1] ?? 0;
      expect(refilledAt >= endedAt || refilledAt - takenAt >= 2000).toBe(true);
    } finally {
      await holding.closeWith(bridges);
    }
  }, 60_000);

  it("takes a bridge's word only once it is handed a run: then it kills the bridge's group and tells the run its code", async () => {
    const root = tempRoot('warm-word-');
    // A stand-in spawner: each "bridge" a real process in a group of its own (the pool signals
    // groups), its stdin socket a pair of streams the test speaks on.
    let bridge: { pid: number; say: (line: string) => void; ended: Promise<NodeJS.Signals | null> } | undefined;
    const spawner = {
      spawn(_request: SpawnRequest, watcher: SpawnWatcher): () => void {
        const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
        const toPool = new PassThrough();
        const stdin = Duplex.from({ readable: toPool, writable: new PassThrough() });
        const ended = new Promise<NodeJS.Signals | null>((resolve) =>
          child.once('exit', (code, signal) => {
            watcher.exited(code, signal);
            resolve(signal);
          }),
        );
        const pid = child.pid ?? 0;
        bridge = { pid, say: (line) => toPool.write(line), ended };
        watcher.spawned(pid, stdin);
        return () => {};
      },
    };
    const bridges = new WarmBridges({
      spawner,
      bridge: { command: 'unused', prefixArgs: [] },
      baseEnv: {},
      root,
      logDir: root,
      entries: [{ entry: 'warm', keep: 1, idleS: 600 }],
      log: () => undefined,
    });
    bridges.start();
    const first = bridge;
    if (first === undefined) throw new Error('the pool started no bridge');
    const told: string[] = [];
    try {
      // Starting, then taken: the word is no one's yet.
      first.say('exit 0\n');
      first.say('ready\n');
      await eventually(() => expect(bridges.status().warm_bridges.warm).toMatchObject([{ pid: first.pid, ready: true }]), 10_000, 10);
      const spare = bridges.take('warm');
      first.say('exit 0\n');
      await settle();
      expect(alive(first.pid)).toBe(true);

      // The stand-in "bridge" reads no hand-over: any run will do.
      const handOver = bridges.handOver(spare?.id ?? '', scriptedRunRequest(root, 'warm-2', 'answer hello'), tellingWatcher(told));
      expect(handOver).not.toBeNull();
      first.say('exit 3\n');
      // Its group is killed at the word; the run hears the code it said, and nothing more of its exit.
      expect(await first.ended).toBe('SIGKILL');
      await eventually(() => expect(told).toEqual([`spawned ${first.pid}`, 'exited 3 null']), 10_000, 10);
      await settle();
      expect(told).toHaveLength(2);
    } finally {
      bridges.close();
      for (const b of [first, bridge]) if (b !== undefined && alive(b.pid)) process.kill(-b.pid, 'SIGKILL');
    }
  });
});
