/**
 * A reader that closes our stdout early (`raider hall inspect | head`) ends
 * the command quietly, as SIGPIPE ends a C program. Node ignores SIGPIPE and
 * reports EPIPE instead: as an error event on process.stdout, or thrown by a
 * synchronous write to fd 1.
 */

let watching = false;

export function isClosedPipe(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === 'EPIPE';
}

/** Nobody is left to read what the command would say: it ends now, successfully. */
export function readerGone(): never {
  process.exit(0);
}

/** Makes an EPIPE on process.stdout end the process quietly; other errors stay uncaught. */
export function endQuietlyWhenStdoutCloses(): void {
  if (watching) return;
  watching = true;
  process.stdout.on('error', (err) => {
    if (isClosedPipe(err)) readerGone();
    throw err;
  });
}
