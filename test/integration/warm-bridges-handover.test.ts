/**
 * A warm bridge that died after a run took it, its exit not yet reported to
 * the pool (the spawner reports it on a later turn), is no bridge to hand the
 * run to: the hand-over says so, and the run starts a bridge of its own
 * (docs/agents.md, "Warm bridges"), instead of being handed to a dead process
 * and failing with no result. The hall's real spawner starts the real bridge;
 * only the report of its exit is held, to keep that window open.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, eventually, removeRoots, tempRoot } from '../cli/cli-helpers.js';
import { hallSpawner, holdingSpawner, oneWarmEntry } from '../support/warm-bridges.js';

afterAll(() => removeRoots());

describe('the hand-over to a warm bridge', () => {
  it('is refused when the bridge died and its exit is not reported yet', async () => {
    const spawner = hallSpawner();
    const root = tempRoot('warm-handover-');
    // Each exit is held until the test lets it through.
    const holding = holdingSpawner(spawner);
    const { held } = holding;
    const bridges = oneWarmEntry(holding, root);
    bridges.start();
    try {
      await eventually(() => expect(bridges.status().warm_bridges.warm).toMatchObject([{ ready: true }]), 20_000, 10);
      const spare = bridges.take('warm');
      expect(spare).toBeDefined();
      const pid = spare?.pid ?? 0;
      process.kill(-pid, 'SIGKILL');
      await eventually(() => expect(alive(pid)).toBe(false), 10_000, 10);
      await eventually(() => expect(held).toHaveLength(1), 10_000, 10);

      const told: string[] = [];
      const handOver = bridges.handOver(
        spare?.id ?? '',
        {
          command: process.execPath,
          args: [],
          env: {},
          cwd: root,
          stdoutPath: path.join(root, 'warm-1.events.jsonl'),
          stderrPath: path.join(root, 'warm.log'),
          runId: 'warm-1',
          bridgeArgs: [],
        },
        {
          spawned: (p) => told.push(`spawned ${p}`),
          failed: (e) => told.push(`failed ${e}`),
          exited: () => told.push('exited'),
          lost: () => {},
        },
      );
      expect(handOver).toBeNull();
      // Its exit, reported now, starts another in its place; the run that took it was told nothing.
      held.shift()?.();
      await eventually(() => expect(bridges.status().warm_bridges.warm).toMatchObject([{ ready: true }]), 20_000, 10);
      expect(told).toEqual([]);
    } finally {
      await holding.closeWith(bridges);
    }
  }, 60_000);
});
