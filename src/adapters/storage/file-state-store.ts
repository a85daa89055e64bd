/**
 * The file-backed state store.
 *
 * Every operation is appended to a write-ahead log (`wal.jsonl`) and
 * fdatasync'ed before anybody is told it happened; a burst of operations
 * shares one write. The state files of reference §6–§7 are rewritten
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
/** The log is emptied once the files hold everything and it has grown past this. */
const WAL_CHECKPOINT_BYTES = 1 << 20;
const RETRY_DELAY_MS = 1000;

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
  private pending: string[] = [];
  private applied = 0;
  private durable = 0;
  private waiters: Waiter[] = [];
  private dirty: DirtyFiles = noDirt();
  private busy = false;
  private lazyTimer: NodeJS.Timeout | null = null;
  private lazyDue = false;
  private walFd: number | null = null;
  private walBytes = 0;
  private error: string | null = null;
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
    return store;
  }

  apply(op: DurableOp): void {
    if (this.closed) throw new Error('state store is closed');
    this.state.apply(op, this.dirty);
    this.pending.push(canonical(op));
    this.applied++;
    this.kick();
  }

  commit(): Promise<void> {
    if (this.durable >= this.applied) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ upTo: this.applied, resolve, reject });
      this.kick();
    });
  }

  async checkpoint(): Promise<void> {
    await this.commit();
    while (this.busy) await this.whenIdle();
    this.busy = true;
    try {
      await this.writeAllFiles();
      await this.truncateWal();
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
    return this.error;
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

  private kick(): void {
    if (this.busy || this.closed) return;
    if (this.pending.length === 0 && !this.lazyDue) return;
    this.busy = true;
    // setImmediate lets every operation of this turn of the event loop join the write.
    setImmediate(() => {
      this.pump().finally(() => {
        this.busy = false;
        if (this.pending.length > 0 || this.lazyDue) this.kick();
        this.notifyIdle();
      });
    });
  }

  private async pump(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      const upTo = this.applied;
      this.pending = [];
      try {
        await this.appendWal(`${batch.join('\n')}\n`);
      } catch (err) {
        this.pending = batch.concat(this.pending);
        this.fail(err as Error, upTo);
        await delay(RETRY_DELAY_MS);
        return;
      }
      this.durable = upTo;
      this.error = null;
      await this.writeFiles(false);
      this.resolveWaiters();
    }
    if (this.lazyDue) {
      this.lazyDue = false;
      await this.writeFiles(true);
      if (isClean(this.dirty) && this.walBytes > WAL_CHECKPOINT_BYTES && this.pending.length === 0) {
        await this.truncateWal();
      }
    }
  }

  private async appendWal(text: string): Promise<void> {
    if (this.walFd === null) {
      this.walFd = fs.openSync(path.join(this.dir, WAL_FILE), 'a', 0o600);
      this.walBytes = fs.fstatSync(this.walFd).size;
    }
    const fd = this.walFd;
    const data = Buffer.from(text, 'utf8');
    try {
      await writeAll(fd, data);
      await new Promise<void>((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
    } catch (err) {
      // Cut a torn append off so the retried batch starts on a line of its own.
      try {
        fs.ftruncateSync(fd, this.walBytes);
      } catch {
        /* the next open re-reads the size */
      }
      throw err;
    }
    this.walBytes += data.length;
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
    try {
      for (const [name, render] of writes) await writeFileAtomic(path.join(this.dir, name), render());
    } catch (err) {
      // Mark everything dirty again: the log still holds these changes.
      this.markAllDirty();
      this.error = `cannot write state files in ${this.dir}: ${(err as Error).message}`;
      this.options.warn(this.error);
      deferred = true;
    }
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

  private async truncateWal(): Promise<void> {
    if (!isClean(this.dirty)) return;
    const fd = this.walFd ?? fs.openSync(path.join(this.dir, WAL_FILE), 'a', 0o600);
    this.walFd = fd;
    fs.ftruncateSync(fd, 0);
    await new Promise<void>((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
    this.walBytes = 0;
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

  private fail(err: Error, upTo: number): void {
    this.error = `cannot write ${path.join(this.dir, WAL_FILE)}: ${err.message}`;
    this.options.warn(this.error);
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

function writeAll(fd: number, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (offset: number) => {
      fs.write(fd, data, offset, data.length - offset, null, (err, written) => {
        if (err) return reject(err);
        if (offset + written < data.length) step(offset + written);
        else resolve();
      });
    };
    step(0);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
