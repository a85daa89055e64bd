/** How long an ended warm bridge that failed to start waits to be replaced (docs/agents.md, "Warm bridges"). */
import { describe, expect, it } from 'vitest';
import { RETRY_MS, retryWaitMs } from '../../src/domain/warm-retry.js';

describe('retryWaitMs', () => {
  it('waits longer with each failed start in a row, then keeps the last wait', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map(retryWaitMs)).toEqual([1000, 2000, 5000, 15_000, 60_000, 60_000, 60_000]);
    expect(RETRY_MS.at(-1)).toBe(60_000);
  });
});
