/** When an ended warm bridge is replaced: at once, or after a growing wait (docs/agents.md, "Warm bridges"). */
import { describe, expect, it } from 'vitest';
import { EARLY_END_MS, RETRY_MS, retryWaitMs, spareEndVerdict } from '../../src/domain/warm-retry.js';

describe('spareEndVerdict', () => {
  it.each([
    ['one that never got ready: a failed start', { state: 'starting', endedAt: 5 }, { kind: 'retry', early: false }],
    [
      'one that ended soon after it got ready: a failed start',
      { state: 'ready', readyAt: 1000, endedAt: 1000 + EARLY_END_MS - 1 },
      { kind: 'retry', early: true },
    ],
    [
      'one that lived long after it got ready: replaced at once',
      { state: 'ready', readyAt: 1000, endedAt: 1000 + EARLY_END_MS },
      { kind: 'replace' },
    ],
    ['one a run took, however soon: replaced at once', { state: 'taken', readyAt: 1000, endedAt: 1001 }, { kind: 'replace' }],
  ] as const)('%s', (_, end, verdict) => {
    expect(spareEndVerdict(end)).toEqual(verdict);
  });
});

describe('retryWaitMs', () => {
  it('waits longer with each failed start in a row, then keeps the last wait', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map(retryWaitMs)).toEqual([1000, 2000, 5000, 15_000, 60_000, 60_000, 60_000]);
    expect(RETRY_MS.at(-1)).toBe(60_000);
  });
});
