/**
 * The file-backed state store.
 *
 * Every operation is written to a write-ahead log (`wal.jsonl`) as it is
 * applied, so it outlives a crash of the hall process at once (it is in the
 * kernel), and fdatasync'ed before anybody is told it happened, so it
 * outlives a crash of the machine too; a burst of operations shares one
 * fdatasync. A raider's pid and a run's end wait for the next fdatasync
 * (at most LAZY_DELAY_MS): after a machine crash a starting hall finds live
 * raiders by their environment, not their pid, and a run whose end was lost
 * is reported again from its events file. The state files of reference §6–§7 are rewritten
 * atomically (temp file, fsync, rename): small ones right after each log
 * write, so they are current when a reply arrives; big ones (a queue of
 * thousands) a little later in the background, so a long queue does not
 * slow each mission down. Recovery loads the state files and replays the log.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { DurableState, isClean, noDirt, type DirtyFiles, type DurableOp } from './durable-state.js';
import type { HallStateStore } from './state-store.js';
import {
  BINDING_QUEUES_FILE,
  RUNS_FILE,
  SESSIONS_FILE,
  WAL_FILE,
  canonical,
  loadStateFiles,
  kvFile,
  renderBindingQueues,
  renderKv,
  renderRuns,
  renderSessions,
  renderSlotQueue,
  slotQueueFile,
} from './state-files.js';

/** Dirty files holding fewer entries than this are rewritten before a commit resolves. */
const EAGER_ENTRIES = 2000;
/** Background rewrite of big or busy files, and of the ledger. */
const LAZY_DELAY_MS = 200;
/**
 * Space the store keeps for a full disk, as a file in the state directory:
 * when the disk fills up, the file goes and what the hall has already
 * accepted (queued missions, the start and end of their runs) is still
 * written, while new missions are refused until there is room again.
 */
export const RESERVE_FILE = 'space.reserve';
const RESERVE_BYTES = 64 * 1024;
/** How often a spent reserve is made again (one small write that fails while the disk is full). */
const RESERVE_RETRY_MS = 1000;
/** The log is emptied once the files hold everything and it has grown past this. */
const WAL_CHECKPOINT_BYTES = 1 << 20;
const RETRY_DELAY_MS = 1000;
/** Operations nobody waits on before their next fdatasync (see the top). */
const SYNC_LATER: ReadonlySet<DurableOp['op']> = new Set(['pid', 'end']);

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface FileStateStoreOptions {
  /** Problems worth a line in the hall's log (unreadable files, write failures). */
  warn: (message: string) => void;
}

export class FileStateStore implements HallStateStore {
  readonly state = new DurableState();
  /** Lines not yet in the log file (only after a failed write). */
  private unwritten: string[] = [];
  private applied = 0;
  /** Operations up to this one get an fdatasync now; those after it only SYNC_LATER ones. */
  private owed = 0;
  /** Operations fdatasync'ed (all applied ones are in the log file unless a write failed). */
  private durable = 0;
  private waiters: Waiter[] = [];
  private dirty: DirtyFiles = noDirt();
  private busy = false;
  private lazyTimer: NodeJS.Timeout | null = null;
  private lazyDue = false;
  private walFd: number | null = null;
  private walBytes = 0;
  /** The current failure of each kind of write, for `status` and the hall's log (null: it works). */
  private failures: { wal: string | null; files: string | null } = { wal: null, files: null };
  /** Why the reserve was spent (the disk is full), null while it is held. */
  private full: string | null = null;
  private reserveTriedAt = 0;
  private closed = false;

  private constructor(
    private readonly dir: string,
    private readonly options: FileStateStoreOptions,
  ) {}

  /** Loads the state files, replays the log over them, and writes a fresh checkpoint. */
  static async open(dir: string, options: FileStateStoreOptions): Promise<FileStateStore> {
    await fs.promises.mkdir(dir, { recursive: true });
    const store = new FileStateStore(dir, options);
    loadStateFiles(dir, store.state, options.warn);
    store.replayWal();
    await store.checkpoint();
    if (!store.holdReserve()) store.spendReserve('cannot keep its reserve of free space');
    return store;
  }

  apply(op: DurableOp): void {
    if (this.closed) throw new Error('state store is closed');
    this.state.apply(op, this.dirty);
    this.unwritten.push(canonical(op));
    this.applied++;
    if (SYNC_LATER.has(op.op)) this.scheduleLazy();
    else this.owed = this.applied;
    this.writeThrough();
    this.kick();
  }

  /** Writes what was applied into the log now; a failure leaves it for the next try (and is returned). */
  private writeThrough(): Error | null {
    if (this.unwritten.length === 0) return null;
    try {
      this.appendWalSync(`${this.unwritten.join('\n')}\n`);
    } catch (err) {
      this.report('wal', `cannot write ${path.join(this.dir, WAL_FILE)}: ${(err as Error).message}`);
      return err as Error;
    }
    this.unwritten = [];
    return null;
  }

  /** Tries again to write what a failed write left over (a full disk may have room again). */
  written(): boolean {
    this.writeThrough();
    return this.unwritten.length === 0;
  }

  commit(): Promise<void> {
    if (this.durable >= this.owed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ upTo: this.owed, resolve, reject });
      this.kick();
    });
  }

  async checkpoint(): Promise<void> {
    // Everything, the ops that could wait included: the files may fail to be written.
    this.owed = this.applied;
    await this.commit();
    while (this.busy) await this.whenIdle();
    this.busy = true;
    try {
      const rendered = this.applied;
      await this.writeAllFiles();
      await this.truncateWal(rendered);
    } finally {
      this.busy = false;
    }
    this.kick();
  }

  async close(): Promise<void> {
    await this.checkpoint();
    this.closed = true;
    if (this.lazyTimer) clearTimeout(this.lazyTimer);
    if (this.walFd !== null) fs.closeSync(this.walFd);
    this.walFd = null;
  }

  lastError(): string | null {
    this.retryReserve();
    return this.full ?? this.failures.wal ?? this.failures.files;
  }

  accepting(): boolean {
    if (!this.written()) return false;
    this.retryReserve();
    return this.full === null;
  }

  /** Writes the reserve file; false when the disk has no room for it. */
  private holdReserve(): boolean {
    const file = path.join(this.dir, RESERVE_FILE);
    try {
      fs.writeFileSync(file, Buffer.alloc(RESERVE_BYTES), { mode: 0o600 });
      return true;
    } catch {
      fs.rmSync(file, { force: true });
      return false;
    }
  }

  /** The disk is full: free the reserve for what was accepted, and take nothing new. */
  private spendReserve(why: string): void {
    fs.rmSync(path.join(this.dir, RESERVE_FILE), { force: true });
    this.reserveTriedAt = Date.now();
    this.full = `the state directory ${this.dir} is full (${why}); new missions are refused until there is room`;
    this.options.warn(this.full);
  }

  private retryReserve(): void {
    if (this.full === null || this.closed || Date.now() - this.reserveTriedAt < RESERVE_RETRY_MS) return;
    this.reserveTriedAt = Date.now();
    if (!this.holdReserve()) return;
    this.full = null;
    this.options.warn(`the state directory ${this.dir} has room again`);
  }

  private replayWal(): void {
    const file = path.join(this.dir, WAL_FILE);
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    let bad = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        this.state.apply(JSON.parse(line) as DurableOp, this.dirty);
      } catch {
        bad++;
      }
    }
    // A torn last line is what a crash mid-write leaves; anything more is worth saying.
    if (bad > 1) this.options.warn(`${file}: ${bad} unreadable lines skipped`);
  }

  private needsSync(): boolean {
    return this.durable < this.owed;
  }

  private kick(): void {
    if (this.busy || this.closed) return;
    if (!this.needsSync() && !this.lazyDue) return;
    this.busy = true;
    // setImmediate lets every operation of this turn of the event loop join the write.
    setImmediate(() => {
      this.pump().finally(() => {
        this.busy = false;
        if (this.needsSync() || this.lazyDue) this.kick();
        this.notifyIdle();
      });
    });
  }

  private async pump(): Promise<void> {
    while (this.needsSync()) {
      if (!(await this.syncApplied())) return;
      await this.writeFiles(false);
      this.resolveWaiters();
    }
    if (this.lazyDue) {
      this.lazyDue = false;
      if (this.durable < this.applied && !(await this.syncApplied())) {
        this.scheduleLazy();
        return;
      }
      const rendered = this.applied;
      await this.writeFiles(true);
      // A commit made while this sync ran may need no more than it: nothing else would answer it.
      this.resolveWaiters();
      if (this.walBytes > WAL_CHECKPOINT_BYTES) await this.truncateWal(rendered);
    }
  }

  /** Writes and fdatasyncs everything applied; false (after a pause) when that failed. */
  private async syncApplied(): Promise<boolean> {
    const upTo = this.applied;
    try {
      const failure = this.writeThrough();
      if (failure) throw failure;
      await this.syncWal();
    } catch (err) {
      this.fail(err as Error, upTo);
      await delay(RETRY_DELAY_MS);
      return false;
    }
    this.durable = Math.max(this.durable, upTo);
    this.recovered('wal');
    return true;
  }

  private openWal(): number {
    if (this.walFd === null) {
      this.walFd = fs.openSync(path.join(this.dir, WAL_FILE), 'a', 0o600);
      this.walBytes = fs.fstatSync(this.walFd).size;
    }
    return this.walFd;
  }

  private appendWalSync(text: string): void {
    const fd = this.openWal();
    const data = Buffer.from(text, 'utf8');
    for (let attempt = 0; ; attempt++) {
      try {
        let offset = 0;
        while (offset < data.length) offset += fs.writeSync(fd, data, offset, data.length - offset);
        break;
      } catch (err) {
        // Cut a torn append off so the retried lines start on a line of their own.
        try {
          fs.ftruncateSync(fd, this.walBytes);
        } catch {
          /* the next open re-reads the size */
        }
        const code = (err as NodeJS.ErrnoException).code;
        if (attempt > 0 || this.full !== null || (code !== 'ENOSPC' && code !== 'EDQUOT')) throw err;
        this.spendReserve((err as Error).message);
      }
    }
    this.walBytes += data.length;
  }

  private syncWal(): Promise<void> {
    const fd = this.openWal();
    return new Promise<void>((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  }

  /** Rewrites dirty state files: all of them when `all`, else only the small ones (the rest later). */
  private async writeFiles(all: boolean): Promise<void> {
    const dirty = this.dirty;
    const writes: Array<[string, () => string]> = [];
    let deferred = false;
    for (const slot of [...dirty.slots]) {
      const queue = this.state.slotQueues.get(slot) ?? [];
      if (!all && queue.length > EAGER_ENTRIES) {
        deferred = true;
        continue;
      }
      dirty.slots.delete(slot);
      writes.push([slotQueueFile(slot), () => renderSlotQueue(this.state.slotQueues.get(slot) ?? [])]);
    }
    if (dirty.bindingQueues) {
      let size = 0;
      for (const q of this.state.bindingQueues.values()) size += q.length;
      if (all || size <= EAGER_ENTRIES) {
        dirty.bindingQueues = false;
        writes.push([BINDING_QUEUES_FILE, () => renderBindingQueues(this.state)]);
      } else deferred = true;
    }
    for (const ns of [...dirty.kv]) {
      dirty.kv.delete(ns);
      writes.push([kvFile(ns), () => renderKv(this.state, ns)]);
    }
    if (dirty.sessions) {
      dirty.sessions = false;
      writes.push([SESSIONS_FILE, () => renderSessions(this.state)]);
    }
    // The ledger changes with every run; the log already holds it, so it is written lazily.
    if (dirty.runs) {
      if (all) {
        dirty.runs = false;
        writes.push([RUNS_FILE, () => renderRuns(this.state)]);
      } else deferred = true;
    }
    let failed = false;
    try {
      for (const [name, render] of writes) await writeFileAtomic(path.join(this.dir, name), render());
    } catch (err) {
      failed = true;
      // Mark everything dirty again: the log still holds these changes.
      this.markAllDirty();
      this.report('files', `cannot write state files in ${this.dir}: ${(err as Error).message}`);
      deferred = true;
    }
    if (!failed && writes.length > 0) this.recovered('files');
    if (deferred) this.scheduleLazy();
  }

  private async writeAllFiles(): Promise<void> {
    this.markAllDirty();
    await this.writeFiles(true);
  }

  private markAllDirty(): void {
    for (const slot of this.state.slotQueues.keys()) this.dirty.slots.add(slot);
    for (const ns of this.state.kv.keys()) this.dirty.kv.add(ns);
    this.dirty.bindingQueues = this.dirty.sessions = this.dirty.runs = true;
  }

  /**
   * Empties the log once the state files hold everything in it: nothing dirty,
   * and no operation applied since the files were rendered (at `rendered`).
   */
  private async truncateWal(rendered: number): Promise<void> {
    if (!isClean(this.dirty) || this.applied !== rendered || this.unwritten.length > 0) return;
    const fd = this.openWal();
    fs.ftruncateSync(fd, 0);
    this.walBytes = 0;
    await new Promise<void>((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
  }

  private scheduleLazy(): void {
    if (this.lazyTimer || this.closed) return;
    this.lazyTimer = setTimeout(() => {
      this.lazyTimer = null;
      this.lazyDue = true;
      this.kick();
    }, LAZY_DELAY_MS);
    this.lazyTimer.unref();
  }

  private resolveWaiters(): void {
    const still: Waiter[] = [];
    for (const w of this.waiters) (w.upTo <= this.durable ? w.resolve() : still.push(w));
    this.waiters = still;
  }

  /**
   * A storage failure for `status` and the hall's log. The store retries every
   * second while the disk is full: the log gets each different failure once,
   * and one line when writing works again.
   */
  private report(kind: 'wal' | 'files', error: string): void {
    if (this.failures[kind] !== error) this.options.warn(error);
    this.failures[kind] = error;
  }

  private recovered(kind: 'wal' | 'files'): void {
    if (this.failures[kind] === null) return;
    this.failures[kind] = null;
    if (this.failures.wal === null && this.failures.files === null) this.options.warn(`state written again in ${this.dir}`);
  }

  private fail(err: Error, upTo: number): void {
    this.report('wal', `cannot write ${path.join(this.dir, WAL_FILE)}: ${err.message}`);
    const failed = new Error(`the hall could not record this on disk: ${err.message}`);
    const still: Waiter[] = [];
    for (const w of this.waiters) (w.upTo <= upTo ? w.reject(failed) : still.push(w));
    this.waiters = still;
  }

  private idleWaiters: Array<() => void> = [];
  private whenIdle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
  private notifyIdle(): void {
    if (this.busy) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
