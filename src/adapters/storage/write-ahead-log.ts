/**
 * The write-ahead log file: lines appended in the order operations happen,
 * made durable by fdatasync, emptied once a checkpoint holds all of it.
 */
import fs from 'node:fs';
import { errorCode } from '../../domain/error-message.js';

/** What the log does when the disk is full: true when room was made and the append may be tried once more. */
export type OnNoSpace = (err: Error) => boolean;

export class WriteAheadLog {
  private fd: number | null = null;
  private size = 0;

  constructor(readonly file: string) {}

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
    return new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
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
