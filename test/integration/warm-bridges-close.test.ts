/**
 * A hall that stops while a warm bridge is still starting (its pid not yet
 * reported by the spawner) ends that bridge all the same, at once: it is not
 * left waiting for a run until its own idle limit (docs/agents.md, "Warm
 * bridges"), holding the hall's exit. The hall's real spawner starts the real
 * bridge; only the report of its pid is held until the hall's stop began.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { SpawnRequest, SpawnWatcher } from '../../src/adapters/os/fork-server.js';
import { alive, eventually, removeRoots, tempRoot } from '../cli/cli-helpers.js';
import { hallSpawner, oneWarmEntry } from '../support/warm-bridges.js';

afterAll(() => removeRoots());

describe('warm bridges at the hall stop', () => {
  it('ends a bridge whose pid came after the stop began', async () => {
    const spawner = hallSpawner();
    const root = tempRoot('warm-close-');
    // Filled in by the spawner's callbacks.
    const seen: { pid: number; report?: () => void; exited?: { code: number | null; signal: NodeJS.Signals | null } } = { pid: 0 };
    const held = {
      spawn(request: SpawnRequest, watcher: SpawnWatcher): () => void {
        return spawner.spawn(request, {
          ...watcher,
          spawned: (p, stdin) => {
            seen.pid = p;
            seen.report = () => watcher.spawned(p, stdin);
          },
          exited: (code, signal) => {
            seen.exited = { code, signal };
            watcher.exited(code, signal);
          },
        });
      },
    };
    const bridges = oneWarmEntry(held, root);
    bridges.start();
    try {
      await eventually(() => expect(seen.report).toBeDefined(), 20_000, 10);
      expect(alive(seen.pid)).toBe(true);
      bridges.close();
      seen.report?.();
      // Without its end it would wait for a run for 600 s and more.
      await eventually(() => expect(seen.exited).toBeDefined(), 10_000, 20);
      expect(alive(seen.pid)).toBe(false);
    } finally {
      // A failed check leaves nothing behind (the bridge would wait on: its stdin ends only with this worker).
      if (seen.pid > 0 && alive(seen.pid)) process.kill(-seen.pid, 'SIGKILL');
      await spawner.close();
    }
  }, 30_000);
});
