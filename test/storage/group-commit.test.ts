/** Group commit: which commit waits for which sync, with a sync we hold and release by hand. */
import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/adapters/storage/group-commit.js';

/** A sync that waits until released; counts how often it ran. */
function heldSync() {
  const pending: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  const sync = () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
  const started = async (n: number) => {
    while (pending.length < n) await new Promise((r) => setImmediate(r));
  };
  return { pending, sync, started };
}

describe('GroupCommit', () => {
  it('resolves at once when nothing is owed', async () => {
    const held = heldSync();
    const commits = new GroupCommit(held.sync);
    await commits.commit();
    expect(held.pending).toHaveLength(0);
  });

  it('commits of one burst share one sync', async () => {
    const held = heldSync();
    const commits = new GroupCommit(held.sync);
    commits.note(false);
    const a = commits.commit();
    commits.note(false);
    const b = commits.commit();
    await held.started(1);
    held.pending[0]!.resolve();
    await Promise.all([a, b]);
    expect(held.pending).toHaveLength(1);
  });

  it('a commit asked for while a sync runs waits for the next one, which takes everything applied meanwhile', async () => {
    const held = heldSync();
    const commits = new GroupCommit(held.sync);
    commits.note(false);
    const first = commits.commit();
    await held.started(1);
    commits.note(false);
    const second = commits.commit();
    commits.note(false);
    const third = commits.commit();
    let secondDone = false;
    void second.then(() => (secondDone = true));
    held.pending[0]!.resolve();
    await first;
    await held.started(2);
    expect(secondDone).toBe(false);
    held.pending[1]!.resolve();
    await Promise.all([second, third]);
    expect(held.pending).toHaveLength(2);
  });

  it('operations that may wait do not hold a commit up, but go with the next sync and with commitAll', async () => {
    const held = heldSync();
    const commits = new GroupCommit(held.sync);
    commits.note(true);
    await commits.commit();
    expect(held.pending).toHaveLength(0);
    const all = commits.commitAll();
    await held.started(1);
    held.pending[0]!.resolve();
    await all;
    expect(commits.count).toBe(1);
  });

  it('a failed sync rejects the commits it covered; a later commit syncs again', async () => {
    const held = heldSync();
    const commits = new GroupCommit(held.sync);
    commits.note(false);
    const failed = commits.commit();
    await held.started(1);
    held.pending[0]!.reject(new Error('the hall could not record this on disk: ENOSPC'));
    await expect(failed).rejects.toThrow(/ENOSPC/);
    const retried = commits.commit();
    await held.started(2);
    held.pending[1]!.resolve();
    await retried;
  });

  it('a sync that blocks the loop waits for the end of the turn; one that does not starts at once', async () => {
    for (const holdsLoop of [true, false]) {
      const held = heldSync();
      const commits = new GroupCommit(held.sync, () => holdsLoop);
      commits.note(false);
      const done = commits.commit();
      // Microtasks only: the turn is not over yet.
      for (let i = 0; i < 10; i++) await Promise.resolve();
      expect(held.pending).toHaveLength(holdsLoop ? 0 : 1);
      await held.started(1);
      held.pending[0]?.resolve();
      await done;
    }
  });
});
