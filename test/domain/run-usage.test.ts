/** A run's own share of its agent session's cost (docs/agents.md, "Usage and cost"), and the cost on the bridge's command line. */
import { describe, expect, it } from 'vitest';
import { costArg, costOfArg, runCostOf } from '../../src/domain/run-usage.js';

const usd = (amount: number) => ({ amount, currency: 'USD' });

describe('runCostOf', () => {
  it('is the session cost less the earlier figure in the same currency, rounded past float noise', () => {
    expect(runCostOf(usd(1.25), usd(0.5))).toEqual(usd(0.75));
    expect(runCostOf(usd(1.3), usd(1.1))).toEqual(usd(0.2));
    expect(runCostOf(usd(0.5), usd(0.5))).toEqual(usd(0));
  });

  it('is the whole cost with no earlier figure, one in another currency, or one above it (never negative)', () => {
    expect(runCostOf(usd(0.5), undefined)).toEqual(usd(0.5));
    expect(runCostOf(usd(1.25), { amount: 0.5, currency: 'EUR' })).toEqual(usd(1.25));
    expect(runCostOf(usd(0.2), usd(0.9))).toEqual(usd(0.2));
  });
});

describe('--agent-session-cost AMOUNT:CURRENCY', () => {
  it('reads back what it wrote, and nothing from a malformed argument', () => {
    expect(costArg(usd(0.5))).toBe('0.5:USD');
    expect(costOfArg(costArg(usd(1.25)))).toEqual(usd(1.25));
    expect(costOfArg('0.5:credits:x')).toEqual({ amount: 0.5, currency: 'credits:x' });
    for (const bad of ['0.5', ':USD', 'x:USD', '0.5:', '']) expect(costOfArg(bad)).toBeUndefined();
  });
});
