/**
 * Canonical JSON (sorted keys) and synchronous, complete writes to a file
 * descriptor. Events and journal lines are written synchronously so that
 * each one is on its way before the next thing happens — in particular
 * before the raider kills itself with a signal at the end of a cancel.
 */
import { writeSync } from 'node:fs';
import stringify from 'safe-stable-stringify';
import { isClosedPipe, readerGone } from '../os/closed-pipe.js';
import { errorCode } from '../domain/error-message.js';

const canonical = stringify.configure({ deterministic: true, bigint: true });

/** One compact canonical JSON object; newlines in strings are escaped, so it is one line. */
export function canonicalLine(value: object): string {
  return canonical(value);
}

/** Pretty canonical JSON (two-space indent), for `--json`. */
export function canonicalPretty(value: object): string {
  return canonical(value, null, 2);
}

/**
 * Write all of `text` to `fd`. A pipe the parent made non-blocking can
 * answer EAGAIN when it is full; then we wait a moment and go on rather
 * than lose an event.
 */
export function writeAllSync(fd: number, text: string): void {
  let buf = Buffer.from(text, 'utf8');
  while (buf.length > 0) {
    try {
      const n = writeSync(fd, buf);
      buf = buf.subarray(n);
    } catch (err) {
      // Our stdout's reader left (`| head -1`): end as quietly as SIGPIPE would.
      if (fd === 1 && isClosedPipe(err)) readerGone();
      if (errorCode(err) !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
}

/** Epoch seconds as a float, with sub-millisecond resolution. */
export function epochSeconds(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}
