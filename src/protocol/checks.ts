/**
 * Building blocks for the protocol's schemas: a field checked by one of the
 * domain's problem functions answers with that function's own text, so a
 * schema refuses a payload in the words the hall has always used.
 */
import { z } from 'zod';

/** Why a value is not accepted, or null when it is. */
export type Problem = (value: unknown) => string | null;

/** A string field that `problem` accepts; refused with the text `problem` gives. */
export function checkedString(problem: Problem): z.ZodString {
  return z.string({ error: (issue) => problem(issue.input) ?? undefined }).check((ctx) => {
    const why = problem(ctx.value);
    if (why !== null) ctx.issues.push({ code: 'custom', message: why, input: ctx.value });
  });
}

/** A non-empty string, or `missing` as the whole error. */
export function requiredString(missing: string): z.ZodString {
  return checkedString((value) => (typeof value === 'string' && value !== '' ? null : missing));
}

/** An optional string field; JSON null counts as absent, as the hall has always read it. */
export function optionalString(schema: z.ZodString) {
  return schema.nullish().transform((value) => value ?? undefined);
}

/** The text of the first thing wrong with a value: the one the hall answers with. */
export function firstProblem(error: z.ZodError): string {
  return error.issues[0]?.message ?? 'invalid payload';
}
