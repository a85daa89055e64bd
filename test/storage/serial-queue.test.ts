/** The serial queue that drives the store: one task at a time, in order, a waiting task shared by key. */
import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../../src/adapters/storage/serial-queue.js';

function gate(): { open: () => void; opened: Promise<void> } {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('SerialQueue', () => {
  it('runs tasks one at a time, in the order they were asked for', async () => {
    const queue = new SerialQueue();
    const order: string[] = [];
    const first = gate();
    const a = queue.once('a', async () => {
      order.push('a start');
      await first.opened;
      order.push('a end');
    });
    const b = queue.once('b', async () => {
      order.push('b');
    });
    await Promise.resolve();
    expect(order).toEqual(['a start']);
    first.open();
    await Promise.all([a, b]);
    expect(order).toEqual(['a start', 'a end', 'b']);
  });

  it('shares a task that has not started yet with a second caller of the same key, but not one that runs', async () => {
    const queue = new SerialQueue();
    const running = gate();
    let runs = 0;
    const task = async (): Promise<void> => {
      runs++;
      await running.opened;
    };
    const first = queue.once('sync', task);
    await new Promise((r) => setImmediate(r));
    // The first one runs now: a new caller gets a task of its own, and a third shares that one.
    const second = queue.once('sync', task);
    const third = queue.once('sync', task);
    expect(third).toBe(second);
    running.open();
    await Promise.all([first, second, third]);
    expect(runs).toBe(2);
  });

  it('a failed task answers its own callers and the next one still runs', async () => {
    const queue = new SerialQueue();
    const failed = queue.once('x', async () => {
      throw new Error('disk on fire');
    });
    const next = queue.once('y', async () => {});
    await expect(failed).rejects.toThrow('disk on fire');
    await expect(next).resolves.toBeUndefined();
    await queue.drained();
  });
});
