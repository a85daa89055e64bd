/**
 * The write-ahead log file: lines appended in the order operations happen,
 * made durable by fdatasync, emptied once a checkpoint holds all of it.
 *
 * The file is kept longer than its lines, padded with zero bytes
 * (PREALLOCATED_BYTES at a time), and lines are written over the padding: an
 * fdatasync after a write that does not change the file's size needs no
 * journal commit for it (ext4: ~0.14 against ~0.21 ms a sync). The log's
 * text therefore ends at its first zero byte.
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
/** The padding added when a line would not fit in the file: ~1,300 spawns' lines. */
export const PREALLOCATED_BYTES = 256 * 1024;
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
  /** Bytes of lines: where the next append goes. */
  private size = 0;
  /** Bytes in the file, lines and padding. */
  private allocated = 0;
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

  /** Bytes of lines in the log file. */
  get bytes(): number {
    this.open();
    return this.size;
  }

  /** The log's text (up to its padding), '' when there is none yet. */
  read(): string {
    return linesOf(readIfAny(this.file)).toString('utf8');
  }

  /**
   * Appends `text` (whole lines) now, so it outlives a crash of the process.
   * A failed append is cut off again, so a retried one starts on a line of its own.
   */
  append(text: string, onNoSpace: OnNoSpace): void {
    const fd = this.open();
    const lines = Buffer.from(text, 'utf8');
    const fits = this.size + lines.length <= this.allocated;
    // A line that does not fit brings the next padding along; a disk too full for that gets the line alone.
    if (fits || this.writeAtEnd(fd, Buffer.concat([lines, Buffer.alloc(PREALLOCATED_BYTES)])) !== null) {
      let full = this.writeAtEnd(fd, lines);
      // The first time, room made for what was accepted (the reserve) lets the append be tried once more.
      if (full !== null && onNoSpace(full)) full = this.writeAtEnd(fd, lines);
      if (full !== null) throw full;
    }
    this.size += lines.length;
  }

  /**
   * Writes `data` after the lines. A full disk is returned, any other failure
   * thrown; either way the file ends with the last whole line again, no padding.
   */
  private writeAtEnd(fd: number, data: Buffer): Error | null {
    try {
      let offset = 0;
      while (offset < data.length) offset += fs.writeSync(fd, data, offset, data.length - offset, this.size + offset);
      this.allocated = Math.max(this.allocated, this.size + data.length);
      return null;
    } catch (err) {
      // Should the cut fail, the next write still goes to the end of the lines, and pads again.
      this.allocated = this.size;
      try {
        fs.ftruncateSync(fd, this.size);
      } catch {
        // The next open reads the size again.
      }
      const code = errorCode(err);
      if (err instanceof Error && (code === 'ENOSPC' || code === 'EDQUOT')) return err;
      throw err;
    }
  }

  /** Cuts off what follows the last whole line of `text` (the log's content): a torn append. */
  cutAfterLastLine(text: string): void {
    const fd = this.open();
    this.size = Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1), 'utf8');
    fs.ftruncateSync(fd, this.size);
    this.allocated = this.size;
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
    this.allocated = 0;
    await new Promise<void>((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private open(): number {
    if (this.fd === null) {
      const fd = fs.openSync(this.file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
      // The padding a crash left is cut off: lines are written only over zeros
      // this process wrote, never over what an earlier one left past its end.
      const content = readIfAny(this.file);
      this.size = linesOf(content).length;
      if (content.length !== this.size) fs.ftruncateSync(fd, this.size);
      this.allocated = this.size;
      this.fd = fd;
    }
    return this.fd;
  }
}

function readIfAny(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return Buffer.alloc(0);
    throw err;
  }
}

/** The log's lines: what comes before the first zero byte (the padding). */
function linesOf(content: Buffer): Buffer {
  const end = content.indexOf(0);
  return end === -1 ? content : content.subarray(0, end);
}
