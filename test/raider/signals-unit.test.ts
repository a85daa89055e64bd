// RunSignals in-process, driven by emitted (not real) signals: the state
// rules of the raider's signals that a real run passes through too fast to hit by timing.
import { afterEach, describe, expect, it } from 'vitest';
import { RunSignals } from '../../src/raider/signals.js';

let current: RunSignals | undefined;
afterEach(() => current?.uninstall());

function installed(): RunSignals {
  current = new RunSignals();
  current.install();
  return current;
}

describe('RunSignals', () => {
  it('first SIGINT cancels, a second one while cancelling interrupts with INT', async () => {
    const s = installed();
    let woke = false;
    void s.interrupted.then(() => (woke = true));
    process.emit('SIGINT');
    expect(s.signal.aborted).toBe(true);
    expect(s.interruptedBy).toBeUndefined();
    process.emit('SIGINT');
    expect(s.interruptedBy).toBe('INT');
    await Promise.resolve();
    expect(woke).toBe(true);
  });

  it('SIGTERM interrupts at once, and a later SIGINT does not change it', () => {
    const s = installed();
    process.emit('SIGTERM');
    expect(s.signal.aborted).toBe(true);
    expect(s.interruptedBy).toBe('TERM');
    process.emit('SIGINT');
    expect(s.interruptedBy).toBe('TERM');
  });

  it('after the outcome is settled, signals change nothing', () => {
    const s = installed();
    s.settle();
    process.emit('SIGINT');
    process.emit('SIGTERM');
    expect(s.signal.aborted).toBe(false);
    expect(s.interruptedBy).toBeUndefined();
  });
});
