/**
 * Runs tasks one at a time, in the order they were asked for. A task asked
 * for under a key that is already waiting (not yet started) is not queued
 * again: the caller shares the waiting one. That is how syncs and
 * checkpoints coalesce without flags saying which is due.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly waiting = new Map<string, Promise<void>>();

  /** Runs `task` after every task asked for before it; shares a waiting task of the same key. */
  once(key: string, task: () => Promise<void>): Promise<void> {
    const pending = this.waiting.get(key);
    if (pending !== undefined) return pending;
    const run = this.tail.then(() => {
      this.waiting.delete(key);
      return task();
    });
    this.waiting.set(key, run);
    // A failed task answers its own callers; the next one still runs.
    this.tail = run.catch(() => {});
    return run;
  }

  /** Resolves once every task asked for so far has run. */
  async drained(): Promise<void> {
    for (;;) {
      const tail = this.tail;
      await tail;
      if (tail === this.tail) return;
    }
  }
}
