/**
 * What a run used, as its raider reported it in its run document: the turn's
 * tokens (an ACP prompt result's `usage`), the agent's context and the
 * session's cost (its last `usage_update`). Each field is there only when the
 * raider was told it.
 */
import { z } from 'zod';

const count = z.number().nonnegative();

export const RunUsage = z.object({
  input_tokens: count.optional(),
  output_tokens: count.optional(),
  total_tokens: count.optional(),
  thought_tokens: count.optional(),
  cached_read_tokens: count.optional(),
  cached_write_tokens: count.optional(),
  context_used: count.optional(),
  context_size: count.optional(),
  cost: z.object({ amount: z.number(), currency: z.string() }).optional(),
});

export type RunUsage = z.infer<typeof RunUsage>;

/** The usage a run document says; undefined when it says none or something malformed. */
export function runUsageOf(value: unknown): RunUsage | undefined {
  const parsed = RunUsage.safeParse(value);
  return parsed.success && Object.keys(parsed.data).length > 0 ? parsed.data : undefined;
}
