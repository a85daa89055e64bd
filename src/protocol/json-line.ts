/**
 * One line of a JSON-lines stream or file read as what `schema` says it is:
 * null when it is not JSON (a half-written line, garbage) or not that.
 */
import { z } from 'zod';

/** Any JSON object: a line read for what it says, whatever its fields (an events-file line shown as it comes). */
export const JsonObject = z.record(z.string(), z.unknown());

export function parseJsonLine<T>(line: string, schema: z.ZodType<T>): T | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
