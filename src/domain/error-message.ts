/** The message of anything thrown, without a stack: an Error's message, or the value as text. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
