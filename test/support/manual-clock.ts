/**
 * A clock for XState that fires timers in deadline order as time advances,
 * including timers scheduled while advancing (SimulatedClock.increment skips
 * those).
 */
export class ManualClock {
  private nowMs = 0;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.nowMs;
  }

  setTimeout = (fn: (...args: unknown[]) => void, ms: number): number => {
    const id = this.nextId++;
    this.timers.set(id, { at: this.nowMs + ms, fn });
    return id;
  };

  clearTimeout = (id: unknown): void => {
    if (typeof id === 'number') this.timers.delete(id);
  };

  /** Moves time forward by `ms`, firing every timer due on the way in order. */
  advance(ms: number): void {
    const end = this.nowMs + ms;
    for (;;) {
      let nextId: number | undefined;
      let next: { at: number; fn: () => void } | undefined;
      for (const [id, timer] of this.timers) {
        if (timer.at <= end && (next === undefined || timer.at < next.at)) {
          nextId = id;
          next = timer;
        }
      }
      if (next === undefined || nextId === undefined) break;
      this.timers.delete(nextId);
      this.nowMs = next.at;
      next.fn();
    }
    this.nowMs = end;
  }

  pending(): number {
    return this.timers.size;
  }
}
