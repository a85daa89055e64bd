/**
 * Following a run's events file while the raider writes it, so its events
 * reach ACP clients as they happen: inotify (fs.watch) wakes the reader at
 * once, a slow poll covers file systems without it. `finish` reads what is
 * left and stops: after it, every event of the run has been delivered.
 * A line longer than the cap is skipped and reported: a raider writing
 * without newlines must not grow the hall's memory.
 */
import fs from 'node:fs';
import { lineSink, MAX_LINE_BYTES, type LineFault, type LineSink } from '../../protocol/line-reader.js';
import { JsonObject, parseJsonLine } from '../../protocol/json-line.js';

const POLL_MS = 250;
/** What follows one run's events for an ACP stream: a local file, or the cluster's copy of a run on another hall. */
export interface RunEventSource {
  start(): void;
  /** Delivers what is left of the run's events, then stops; once it resolves every event was delivered. */
  finish(): Promise<void> | void;
  stop(): void;
  /** Delivers what the run has written so far, at once, where the source can (a local file). */
  catchUp?(): void;
}

export class RunEventTail implements RunEventSource {
  private offset = 0;
  private readonly lines: LineSink;
  private watcher: fs.FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private reading = false;
  private again = false;

  constructor(
    private readonly file: string,
    onEvent: (event: Record<string, unknown>) => void,
    onFault: (fault: LineFault) => void,
    maxLineBytes: number = MAX_LINE_BYTES,
  ) {
    this.lines = lineSink((line) => deliver(line, onEvent), { maxBytes: maxLineBytes, utf8: 'replace', onFault });
  }

  start(): void {
    try {
      this.watcher = fs.watch(this.file, () => this.read());
      this.watcher.on('error', () => this.watcher?.close());
    } catch {
      // No inotify for this file: the poll below still reads it.
    }
    this.timer = setInterval(() => this.read(), POLL_MS);
    this.timer.unref();
    this.read();
  }

  catchUp(): void {
    this.read();
  }

  /** Reads everything written so far, delivers it, and stops following. */
  finish(): void {
    this.read();
    this.stop();
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private read(): void {
    if (this.stopped) return;
    // Reads are synchronous and short; a wake-up during one is folded into the next.
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        this.readOnce();
      } while (this.again);
    } finally {
      this.reading = false;
    }
  }

  private readOnce(): void {
    let fd: number;
    try {
      fd = fs.openSync(this.file, 'r');
    } catch {
      return;
    }
    try {
      const size = fs.fstatSync(fd).size;
      while (this.offset < size) {
        const buf = Buffer.alloc(Math.min(1 << 20, size - this.offset));
        const n = fs.readSync(fd, buf, 0, buf.length, this.offset);
        if (n <= 0) break;
        this.offset += n;
        this.lines.push(buf.subarray(0, n));
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** Hands on one line of a run's events when it is a JSON object; anything else is skipped. */
export function deliver(line: string, onEvent: (event: Record<string, unknown>) => void): void {
  if (line === '') return;
  const event = parseJsonLine(line, JsonObject);
  if (event !== null) onEvent(event);
}
