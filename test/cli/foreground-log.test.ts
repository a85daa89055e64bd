/**
 * The foreground hall's log of events (`raider hall start` without --quiet):
 * each event a person reads in it is formatted, with the ids needed to act
 * on it (a waiting mission's id for `queue`, `cancel`).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { eventually, hallLive, hallRoot, removeRoots, request, socketOf } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000 });
afterAll(removeRoots);

describe('raider hall start in the foreground', () => {
  it('prints raider.queued with its mission id and raider.signal formatted, not as raw JSON', async () => {
    const root = hallRoot('raiders: { bjorn: {} }\ncancel_grace: 0.2\n');
    const live = hallLive(['start', root], root);
    try {
      await eventually(() => expect(live.stderr()).toContain('Hall running in'));
      const run = await request(socketOf(root), { cmd: 'spawn', name: '1bjorn', mission: 'wait 30' });
      const waiting = await request(socketOf(root), { cmd: 'spawn', name: '1bjorn', mission: 'answer later' });
      await live.printed(`raider.queued mission ${waiting.mission_id} for 1bjorn waits (queue depth 1)`);
      await live.printed(`raider.spawned ${run.id} started`);
      await request(socketOf(root), { cmd: 'cancel', id: run.id });
      await live.printed(`raider.signal SIGINT to ${run.id} (pid ${run.pid})`);
      expect(live.stdout()).not.toMatch(/raider\.signal \{/);
    } finally {
      live.signal('SIGINT');
    }
    expect((await live.done).code).toBe(0);
  });
});
