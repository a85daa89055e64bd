/**
 * A claimed binding's mission waits for its journal while the database
 * cannot answer (src/actors/patient-journal-pull.ts): tried again until it
 * comes, within the patience; past it, or once the hall stops, the run starts
 * the session over, and the log says which happened.
 */
import { describe, expect, it, vi } from 'vitest';
import { pullPatiently } from '../../src/actors/patient-journal-pull.js';

/** A pull that fails `failures` times with a restarting database's error, then works. */
function flakyPull(failures: number) {
  let calls = 0;
  return {
    calls: () => calls,
    pull: async () => {
      calls++;
      if (calls <= failures) throw new Error('the database system is shutting down');
    },
  };
}

describe('bringing a journal patiently', () => {
  it('tries again while the database restarts, and says when the journal came', async () => {
    const db = flakyPull(3);
    const log: string[] = [];
    const came = await pullPatiently('s-1', {
      pull: db.pull,
      stopped: () => false,
      log: (l) => log.push(l),
      patienceMs: 5_000,
      retryMs: 5,
    });
    expect(came).toBe(true);
    expect(db.calls()).toBe(4);
    expect(log).toEqual([
      'cannot bring the journal of session s-1 from the cluster yet (the database system is shutting down); trying again for up to 5 s',
      'brought the journal of session s-1 from the cluster at attempt 4',
    ]);
  });

  it('asks once and says nothing when the database answers', async () => {
    const db = flakyPull(0);
    const log: string[] = [];
    expect(
      await pullPatiently('s-1', { pull: db.pull, stopped: () => false, log: (l) => log.push(l), patienceMs: 5_000, retryMs: 5 }),
    ).toBe(true);
    expect(db.calls()).toBe(1);
    expect(log).toEqual([]);
  });

  it('gives up after its patience: the run starts the session over, and the log says so', async () => {
    // A simulated clock, however busy the machine: tries at 0, 250, ..., 10,000 ms.
    vi.useFakeTimers();
    try {
      const db = flakyPull(Number.POSITIVE_INFINITY);
      const log: string[] = [];
      const pending = pullPatiently('s-2', {
        pull: db.pull,
        stopped: () => false,
        log: (l) => log.push(l),
        patienceMs: 10_000,
        retryMs: 250,
      });
      await vi.advanceTimersByTimeAsync(10_000);
      expect(await pending).toBe(false);
      expect(db.calls()).toBe(41);
      expect(log).toHaveLength(2);
      expect(log.at(-1)).toBe(
        'cannot bring the journal of session s-2 from the cluster: the database system is shutting down; its run starts the session over',
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops trying once the hall stops', async () => {
    const db = flakyPull(Number.POSITIVE_INFINITY);
    let stopped = false;
    const came = pullPatiently('s-3', {
      pull: async () => {
        stopped = db.calls() >= 1;
        await db.pull();
      },
      stopped: () => stopped,
      log: () => undefined,
      patienceMs: 60_000,
      retryMs: 5,
    });
    expect(await came).toBe(false);
    expect(db.calls()).toBe(2);
  });
});
