/**
 * Creates each run's events file before its raider starts, on the path of
 * every spawn. A new file is the dearest step of that path on ext4 (its inode
 * costs a quarter of a millisecond to a millisecond of kernel time; a link or
 * a rename a twentieth of that), so the maker keeps one empty spare file in
 * the logs directory, made in the background after the last one was used,
 * and gives it the run's name with link(2). Like O_EXCL, a link never takes a
 * name that exists: a run id is still never reused, even after a crash.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errorCode } from '../../domain/error-message.js';

/** Hidden, and without the `.events.jsonl` suffix: nothing that lists runs counts it. */
export const SPARE_EVENTS_FILE = '.spare-events';

export class EventsFileMaker {
  private readonly spare: string;
  /** The spare exists, is empty and was made by this process (one a crash left may share a run's file). */
  private spareReady = false;
  private making = false;
  /** A spare that was linked could not be unlinked: never hand it out again. */
  private broken = false;
  /** Whatever is at the spare's name must go before a spare is made there (a crash may have left it linked to a run's file). */
  private clearFirst = true;
  private closed = false;

  constructor(logsDir: string) {
    this.spare = path.join(logsDir, SPARE_EVENTS_FILE);
  }

  /** Whether the next `create` takes the spare. */
  get hasSpare(): boolean {
    return this.spareReady;
  }

  /**
   * Creates `file`, empty, mode 0644 (less the umask); throws EEXIST when it
   * exists. Makes the logs directory again if somebody removed it.
   */
  create(file: string): void {
    if (!this.fromSpare(file)) createExclusive(file);
    this.makeSpareSoon();
  }

  /** Removes the spare (the hall stops). */
  close(): void {
    this.closed = true;
    this.spareReady = false;
    try {
      fs.rmSync(this.spare, { force: true });
    } catch {
      // A spare left behind is removed by the next hall before it makes its own.
    }
  }

  private fromSpare(file: string): boolean {
    if (!this.spareReady) return false;
    try {
      fs.linkSync(this.spare, file);
    } catch (err) {
      // The name is taken: the spare stays for the next run.
      if (errorCode(err) === 'EEXIST') throw err;
      // The spare or the directory is gone: the file is made the slow way (which makes the directory).
      this.spareReady = false;
      return false;
    }
    this.spareReady = false;
    try {
      fs.unlinkSync(this.spare);
    } catch {
      this.broken = true;
    }
    return true;
  }

  /**
   * Makes the next spare after this turn of the event loop: handing a call
   * to the thread pool wakes one of its threads (0.05-0.3 ms on a VM), which
   * would delay the raider's spawn request that follows `create` on the
   * same turn. The next run needs the spare, this one does not.
   */
  private makeSpareSoon(): void {
    // Several calls in one turn make one spare: makeSpare does nothing while one is ready or being made.
    setImmediate(() => this.makeSpare());
  }

  /** Makes the next spare on the thread pool. */
  private makeSpare(): void {
    if (this.spareReady || this.making || this.broken || this.closed) return;
    this.making = true;
    const make = () =>
      fs.open(this.spare, 'wx', 0o644, (err, fd) => {
        if (err) {
          this.making = false;
          this.clearFirst = true;
          return;
        }
        fs.close(fd, () => {
          this.making = false;
          if (this.closed) fs.rm(this.spare, { force: true }, () => undefined);
          else this.spareReady = true;
        });
      });
    if (!this.clearFirst) {
      make();
      return;
    }
    this.clearFirst = false;
    fs.unlink(this.spare, () => make());
  }
}

function createExclusive(file: string): void {
  const create = () => fs.closeSync(fs.openSync(file, 'wx', 0o644));
  try {
    create();
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw err;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    create();
  }
}
