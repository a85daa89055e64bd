/**
 * The write-ahead log file: lines appended in the order operations happen,
 * made durable by fdatasync, emptied once a checkpoint holds all of it.
 */
import fs from 'node:fs';
import { errorCode } from '../../domain/error-message.js';

/** What the log does when the disk is full: true when room was made and the append may be tried once more. */
export type OnNoSpace = (err: Error) => boolean;

/**
 * While fdatasyncs take this long or less (a moving average), they are done
 * on the event loop: handing one to libuv's thread pool costs two thread
 * wake-ups, on a virtual machine as much as a sync of a fast disk, on the path
 * of every reply. A slower disk gets the thread pool, so it never stalls the
 * loop for longer than about one sync.
 */
export const INLINE_SYNC_MS = 1;
/** The weight of the newest sync in the moving average. */
const SYNC_AVERAGE_WEIGHT = 0.2;

export interface WriteAheadLogOptions {
  /** Syncs up to this long (on average) are done on the event loop; 0: always on the thread pool. */
  inlineSyncMs?: number;
  /** The clock syncs are timed with, in ms. */
  now?: () => number;
}

export class WriteAheadLog {
  private fd: number | null = null;
  private size = 0;
  private readonly inlineSyncMs: number;
  private readonly now: () => number;
  /** The moving average of recent syncs, in ms. */
  private syncMs = 0;

  constructor(
    readonly file: string,
    options: WriteAheadLogOptions = {},
  ) {
    this.inlineSyncMs = options.inlineSyncMs ?? INLINE_SYNC_MS;
    this.now = options.now ?? (() => performance.now());
  }

  /** Bytes in the log file. */
  get bytes(): number {
    this.open();
    return this.size;
  }

  /** The log's text, '' when there is none yet. */
  read(): string {
    try {
      return fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return '';
      throw err;
    }
  }

  /**
   * Appends `text` (whole lines) now, so it outlives a crash of the process.
   * A failed append is cut off again, so a retried one starts on a line of its own.
   */
  append(text: string, onNoSpace: OnNoSpace): void {
    const fd = this.open();
    const data = Buffer.from(text, 'utf8');
    for (let attempt = 0; ; attempt++) {
      try {
        let offset = 0;
        while (offset < data.length) offset += fs.writeSync(fd, data, offset, data.length - offset);
        break;
      } catch (err) {
        try {
          fs.ftruncateSync(fd, this.size);
        } catch {
          // The next open reads the size again.
        }
        const code = errorCode(err);
        if (attempt > 0 || !(err instanceof Error) || (code !== 'ENOSPC' && code !== 'EDQUOT') || !onNoSpace(err)) throw err;
      }
    }
    this.size += data.length;
  }

  /** Cuts off what follows the last whole line of `text` (the log's content): a torn append. */
  cutAfterLastLine(text: string): void {
    const fd = this.open();
    this.size = Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1), 'utf8');
    fs.ftruncateSync(fd, this.size);
  }

  /** Makes every append so far outlive a crash of the machine. */
  sync(): Promise<void> {
    const fd = this.open();
    const start = this.now();
    if (this.syncInline) {
      try {
        fs.fdatasyncSync(fd);
      } catch (err) {
        return Promise.reject(err);
      } finally {
        this.timed(start);
      }
      return Promise.resolve();
    }
    return new Promise((resolve, reject) =>
      fs.fdatasync(fd, (err) => {
        this.timed(start);
        if (err) reject(err);
        else resolve();
      }),
    );
  }

  /** Whether the next sync is done on the event loop. */
  get syncInline(): boolean {
    return this.inlineSyncMs > 0 && this.syncMs <= this.inlineSyncMs;
  }

  private timed(start: number): void {
    this.syncMs += (this.now() - start - this.syncMs) * SYNC_AVERAGE_WEIGHT;
  }

  /** Empties the log (a checkpoint holds everything in it). */
  async truncate(): Promise<void> {
    const fd = this.open();
    fs.ftruncateSync(fd, 0);
    this.size = 0;
    await new Promise<void>((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private open(): number {
    if (this.fd === null) {
      this.fd = fs.openSync(this.file, 'a', 0o600);
      this.size = fs.fstatSync(this.fd).size;
    }
    return this.fd;
  }
}
