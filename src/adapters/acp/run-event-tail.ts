/**
 * Following a run's events file while the raider writes it, so its events
 * reach ACP clients as they happen: inotify (fs.watch) wakes the reader at
 * once, a slow poll covers file systems without it. `finish` reads what is
 * left and stops: after it, every event of the run has been delivered.
 */
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const POLL_MS = 250;

export class RunEventTail {
  private offset = 0;
  private rest = '';
  private readonly decoder = new StringDecoder('utf8');
  private watcher: fs.FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private reading = false;
  private again = false;

  constructor(
    private readonly file: string,
    private readonly onEvent: (event: Record<string, unknown>) => void,
  ) {}

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
        this.consume(this.decoder.write(buf.subarray(0, n)));
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  private consume(text: string): void {
    this.rest += text;
    let nl: number;
    while ((nl = this.rest.indexOf('\n')) >= 0) {
      const line = this.rest.slice(0, nl);
      this.rest = this.rest.slice(nl + 1);
      if (line === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) this.onEvent(value as Record<string, unknown>);
    }
  }
}
