/**
 * Space kept for a full disk, as a file in the state directory: when the
 * disk fills up the file goes, so what the hall already accepted (queued
 * missions, the start and end of their runs) can still be written, while new
 * missions are refused until there is room again.
 */
import fs from 'node:fs';
import path from 'node:path';

export const RESERVE_FILE = 'space.reserve';
const RESERVE_BYTES = 64 * 1024;
/** How often a spent reserve is made again (one small write that fails while the disk is full). */
const RESERVE_RETRY_MS = 1000;

export class DiskReserve {
  /** Why the reserve was spent (the disk is full); null while it is held. */
  private why: string | null = null;
  private triedAt = 0;

  constructor(
    private readonly dir: string,
    private readonly warn: (message: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the reserve at start; spends it at once when the disk has no room for it. */
  take(): void {
    if (!this.hold()) this.spend('cannot keep its reserve of free space');
  }

  /** Null while the reserve is held, else a message saying the disk is full. */
  get full(): string | null {
    return this.why;
  }

  /** The disk is full: free the reserve for what was accepted, and take nothing new. */
  spend(why: string): void {
    fs.rmSync(path.join(this.dir, RESERVE_FILE), { force: true });
    this.triedAt = this.now();
    this.why = `the state directory ${this.dir} is full (${why}); new missions are refused until there is room`;
    this.warn(this.why);
  }

  /** Makes a spent reserve again, at most once a second; true once it is held. */
  retry(): boolean {
    if (this.why === null) return true;
    if (this.now() - this.triedAt < RESERVE_RETRY_MS) return false;
    this.triedAt = this.now();
    if (!this.hold()) return false;
    this.why = null;
    this.warn(`the state directory ${this.dir} has room again`);
    return true;
  }

  /** Writes the reserve file; false when the disk has no room for it. */
  private hold(): boolean {
    const file = path.join(this.dir, RESERVE_FILE);
    try {
      fs.writeFileSync(file, Buffer.alloc(RESERVE_BYTES), { mode: 0o600 });
      return true;
    } catch {
      fs.rmSync(file, { force: true });
      return false;
    }
  }
}
