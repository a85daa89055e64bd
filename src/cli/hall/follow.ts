/**
 * Following a run as it goes (attach, spawn --attach, logs --follow): print
 * what is appended to a file until the hall reports the run's end, then print
 * the rest. The end comes from the event bus, not from polling the hall.
 */
import fs from 'node:fs';
import { hallRequest, hallSubscribe, type BusEnvelope } from '../../protocol/hall-client.js';
import { lineSink, MAX_MESSAGE_BYTES, type LineFault, type LineSink } from '../../protocol/line-reader.js';

const POLL_MS = 100;

export interface FollowOptions {
  socketPath: string;
  runId: string;
  file: string;
  /** Start reading here (bytes); 0 prints the file from its beginning. */
  offset?: number;
  /** Gets every chunk appended to the file. */
  onChunk: (chunk: Buffer) => void;
}

/** Follows the file; resolves with the run's `raider.done` event, or null when the run ended unseen (before we subscribed, or the hall went away). */
export async function followFile(options: FollowOptions): Promise<BusEnvelope | null> {
  let offset = options.offset ?? 0;
  let ended = false;
  let done: BusEnvelope | null = null;
  let wake: (() => void) | null = null;
  const end = () => {
    ended = true;
    wake?.();
  };
  const unsubscribe = await hallSubscribe(
    options.socketPath,
    'raider.done',
    (event) => {
      if (event.id !== options.runId) return;
      done = event;
      end();
    },
    end,
  );
  // The run may have ended before the subscription stood.
  const probe = await hallRequest(options.socketPath, 'attach', { id: options.runId }).catch(() => ({ error: 'gone' }));
  if ('error' in probe) end();

  const readMore = () => {
    let fd: number;
    try {
      fd = fs.openSync(options.file, 'r');
    } catch {
      return;
    }
    try {
      const size = fs.fstatSync(fd).size;
      if (size < offset) offset = 0; // rotated or truncated: start over
      while (offset < size) {
        const buf = Buffer.alloc(Math.min(1 << 20, size - offset));
        const n = fs.readSync(fd, buf, 0, buf.length, offset);
        if (n <= 0) break;
        offset += n;
        options.onChunk(buf.subarray(0, n));
      }
    } finally {
      fs.closeSync(fd);
    }
  };

  try {
    while (!ended) {
      readMore();
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, POLL_MS);
      });
      wake = null;
    }
    readMore();
  } finally {
    unsubscribe();
  }
  return done;
}

/**
 * Splits chunks into lines for printing. A line longer than a message the
 * hall may write is skipped (and told to `onFault`), so following cannot
 * take the terminal's process memory; bytes that are not UTF-8 are replaced.
 */
export function lineSplitter(onLine: (line: string) => void, onFault: (fault: LineFault) => void = () => {}): LineSink {
  return lineSink(onLine, { maxBytes: MAX_MESSAGE_BYTES, utf8: 'replace', onFault });
}
