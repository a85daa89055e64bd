/**
 * A raider's stderr spool: when the hall starts a raider itself
 * (hall-spawner.ts), the raider's stderr is a file of its own, written by the
 * kernel, which no process has to read for the raider to go on. The hall
 * copies each new line of it into the slot log with the run id in front
 * (libexec/line-prefixer.cjs, the fork server's own), and remembers in a
 * mark file how far it got. A hall killed meanwhile loses nothing: the raider
 * writes on into the spool, and the next hall, which adopts the run, copies
 * on from the mark (run-recovery.ts for a run that ended while no hall ran).
 * A crash between a copy and its mark copies those lines again, never loses
 * them (docs/architecture.md, "Starting a raider").
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

interface LinePrefixer {
  push(chunk: Buffer): void;
  end(): void;
}

/** libexec/line-prefixer.cjs, plain CommonJS shared with the fork server. */
interface LinePrefixerModule {
  linePrefixer(fd: number, prefix: string): LinePrefixer;
}

const LINE_PREFIXER_SCRIPT = fileURLToPath(new URL('../../../libexec/line-prefixer.cjs', import.meta.url));
const prefixers: LinePrefixerModule = createRequire(import.meta.url)(LINE_PREFIXER_SCRIPT);

/** What a copy reads at most before it gives the event loop back. */
const READ_BYTES = 64 * 1024;
/** How often a spool is looked at when the kernel cannot tell its changes (no inotify watch to be had). */
const POLL_MS = 250;
/** The mark's width: a byte offset, rewritten in place. */
const MARK_WIDTH = 20;

/** The spool of a run: beside its events file, `ID.stderr`. */
export function stderrSpoolPath(eventsPath: string): string {
  return `${eventsPath.replace(/\.events\.jsonl$/, '')}.stderr`;
}

function markPath(spool: string): string {
  return `${spool}.copied`;
}

function openOrNull(file: string, flags: string | number): number | null {
  try {
    return fs.openSync(file, flags);
  } catch {
    return null;
  }
}

/**
 * Copies a spool into a slot log from its mark on: `follow` as it grows,
 * `finish` once the raider is gone (to its end, then the spool goes).
 */
export class StderrSpool {
  private spoolFd: number | null = null;
  private logFd: number | null = null;
  private markFd: number | null = null;
  private lines: LinePrefixer | null = null;
  /** Bytes of the spool read and handed to the prefixer. */
  private readAt = 0;
  private watcher: fs.FSWatcher | null = null;
  private poller: NodeJS.Timeout | null = null;
  private scheduled = false;
  private done = false;
  private readonly chunk = Buffer.allocUnsafe(READ_BYTES);

  constructor(
    private readonly spool: string,
    private readonly logPath: string,
    private readonly prefix: string,
  ) {}

  /** Copies each change as the kernel tells it (a spool that is not there has nothing to copy). */
  follow(): void {
    if (this.done || this.watcher !== null || this.poller !== null) return;
    try {
      this.watcher = fs.watch(this.spool, { persistent: false }, () => this.schedule());
      this.watcher.on('error', () => this.pollInstead());
    } catch {
      this.pollInstead();
    }
    this.schedule();
  }

  /** The raider is gone: copies what is left, removes the spool, then calls `then` (on a later turn). */
  finish(then: () => void): void {
    this.stopWatching();
    const step = () => {
      if (this.copy()) setImmediate(step);
      else {
        this.close(true);
        then();
      }
    };
    setImmediate(step);
  }

  /** Copies what is left at once (a hall starting up, for a run that ended while none ran). */
  finishNow(): void {
    this.stopWatching();
    while (this.copy());
    this.close(true);
  }

  /** Stops copying and keeps the spool (the hall stops; the next one copies on from the mark). */
  stop(): void {
    this.stopWatching();
    this.close(false);
  }

  private pollInstead(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.done || this.poller !== null) return;
    this.poller = setInterval(() => this.schedule(), POLL_MS);
    this.poller.unref();
  }

  private stopWatching(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.poller !== null) clearInterval(this.poller);
    this.poller = null;
  }

  private schedule(): void {
    if (this.scheduled || this.done) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.done && this.copy()) this.schedule();
    });
  }

  private open(): boolean {
    if (this.spoolFd !== null) return true;
    this.spoolFd = openOrNull(this.spool, 'r');
    if (this.spoolFd === null) return false;
    this.markFd = openOrNull(markPath(this.spool), fs.constants.O_RDWR | fs.constants.O_CREAT);
    if (this.markFd !== null) {
      const mark = Buffer.alloc(MARK_WIDTH);
      const got = fs.readSync(this.markFd, mark, 0, MARK_WIDTH, 0);
      const at = Number.parseInt(mark.subarray(0, got).toString('latin1'), 10);
      if (Number.isSafeInteger(at) && at > 0) this.readAt = at;
    }
    return true;
  }

  /** One read's worth into the log; true when there may be more. */
  private copy(): boolean {
    if (this.done || !this.open() || this.spoolFd === null) return false;
    let got: number;
    try {
      got = fs.readSync(this.spoolFd, this.chunk, 0, READ_BYTES, this.readAt);
    } catch {
      return false;
    }
    if (got === 0) return false;
    const bytes = this.chunk.subarray(0, got);
    if (this.lines === null) {
      this.logFd = openOrNull(this.logPath, 'a');
      if (this.logFd === null) return false;
      this.lines = prefixers.linePrefixer(this.logFd, this.prefix);
    }
    this.lines.push(bytes);
    const lastNewline = bytes.lastIndexOf(10);
    this.readAt += got;
    // Up to the last whole line: a line still being written is read again after a crash.
    if (lastNewline >= 0) this.mark(this.readAt - got + lastNewline + 1);
    return got === READ_BYTES;
  }

  private mark(at: number): void {
    if (this.markFd === null) return;
    try {
      fs.writeSync(this.markFd, String(at).padEnd(MARK_WIDTH), 0);
    } catch {
      // The mark is lost: a crash now would copy some lines twice.
    }
  }

  private close(remove: boolean): void {
    if (this.done) return;
    this.done = true;
    if (remove) this.lines?.end();
    for (const fd of [this.spoolFd, this.logFd, this.markFd]) if (fd !== null) fs.closeSync(fd);
    this.spoolFd = this.logFd = this.markFd = null;
    if (remove) {
      fs.rmSync(this.spool, { force: true });
      fs.rmSync(markPath(this.spool), { force: true });
    }
  }
}

/** A raider's start as far as its stderr goes (these fields of fork-server.ts's SpawnRequest). */
interface StderrRoute {
  stdoutPath: string;
  stderrPath: string;
  stderrPrefix?: string;
}

/**
 * The stderr of a raider the hall starts itself (hall-spawner.ts) or hands a
 * run to (a warm bridge, actors/warm-bridges.ts): with a prefix the raider
 * writes into its spool, which is followed into `stderrPath` once it runs;
 * without one, straight into `stderrPath`.
 */
export class RaiderStderr {
  /** Where the raider writes its stderr. */
  readonly path: string;
  private readonly copier: StderrSpool | null;

  constructor(route: StderrRoute) {
    const spool = stderrSpoolPath(route.stdoutPath);
    this.path = route.stderrPrefix !== undefined ? spool : route.stderrPath;
    this.copier = route.stderrPrefix !== undefined ? new StderrSpool(spool, route.stderrPath, route.stderrPrefix) : null;
  }

  /** The raider runs: its lines are copied as they come. */
  follow(): void {
    this.copier?.follow();
  }

  /** The raider is gone: what is left is copied, then `then` is called (on a later turn either way). */
  finish(then: () => void): void {
    if (this.copier !== null) this.copier.finish(then);
    else setImmediate(then);
  }
}
