/** The message of anything thrown, without a stack: an Error's message, or the value as text. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** The `code` of a system error (`ENOENT`, `EEXIST`, ...), or undefined for anything else. */
export function errorCode(err: unknown): string | undefined {
  if (!(err instanceof Error) || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}
