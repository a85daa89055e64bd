import { afterAll, describe, expect, it } from 'vitest';
import { alive, eventually, removeRoots, tempRoot } from '../cli/cli-helpers.js';
import { hallSpawner, holdingSpawner, oneWarmEntry, scriptedRunRequest, tellingWatcher } from '../support/warm-bridges.js';

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
      const handOver = bridges.handOver(spare?.id ?? '', scriptedRunRequest(root, 'warm-1', 'answer hello'), tellingWatcher(told));
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
