/**
 * What a run used, as its raider reported it in its run document: the turn's
 * tokens (an ACP prompt result's `usage`), the agent's context and the
 * session's cost (its last `usage_update`), and the run's own share of that
 * cost (docs/agents.md, "Usage and cost"). Each field is there only when the
 * raider was told it.
 */
import { z } from 'zod';

const count = z.number().nonnegative();

export const Cost = z.object({ amount: z.number(), currency: z.string() });
export type Cost = z.infer<typeof Cost>;

/** The agent's context and the session's cumulative cost as one `usage` event of a run says them (an ACP `usage_update`). */
export const ContextUsage = z.object({ context_used: z.number(), context_size: z.number(), cost: Cost.optional() });
export type ContextUsage = z.infer<typeof ContextUsage>;

export const RunUsage = z.object({
  input_tokens: count.optional(),
  output_tokens: count.optional(),
  total_tokens: count.optional(),
  thought_tokens: count.optional(),
  cached_read_tokens: count.optional(),
  cached_write_tokens: count.optional(),
  context_used: count.optional(),
  context_size: count.optional(),
  cost: Cost.optional(),
  run_cost: Cost.optional(),
});

export type RunUsage = z.infer<typeof RunUsage>;

/** The usage a run document says; undefined when it says none or something malformed. */
export function runUsageOf(value: unknown): RunUsage | undefined {
  const parsed = RunUsage.safeParse(value);
  return parsed.success && Object.keys(parsed.data).length > 0 ? parsed.data : undefined;
}

/**
 * A run's own share of its agent session's cost: the session's cost at the
 * run's end less its cost at the end of the run before it in the same
 * session (`earlier`, when known and in the same currency). A figure that
 * went down (the agent counted anew) is the run's whole.
 */
export function runCostOf(cost: Cost, earlier: Cost | undefined): Cost {
  if (earlier === undefined || earlier.currency !== cost.currency || cost.amount < earlier.amount) return cost;
  // Rounded to 12 decimal places, so 1.3 - 1.1 says 0.2, not 0.19999999999999996.
  return { amount: Number((cost.amount - earlier.amount).toFixed(12)), currency: cost.currency };
}

/** A cost on a command line: `AMOUNT:CURRENCY` (`0.5:USD`). */
export function costArg(cost: Cost): string {
  return `${cost.amount}:${cost.currency}`;
}

/** The cost an `AMOUNT:CURRENCY` argument says; undefined when it says none. */
export function costOfArg(text: string): Cost | undefined {
  const colon = text.indexOf(':');
  if (colon <= 0) return undefined;
  const amount = Number(text.slice(0, colon));
  const currency = text.slice(colon + 1);
  return Number.isFinite(amount) && currency !== '' ? { amount, currency } : undefined;
}
