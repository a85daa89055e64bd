/**
 * The file-backed state store (docs/storage.md).
 *
 * Every operation is appended to the write-ahead log (`wal.jsonl`) as it is
 * applied, so it outlives a crash of the hall process at once, and a commit
 * resolves once a group-commit fdatasync covers it, so it outlives a crash of
 * the machine too. A raider's pid and a run's end need not hold a commit up:
 * after a machine crash a starting hall finds live raiders by their
 * environment and reports a lost end again from the events file.
 *
 * The log is the truth. The state files are checkpoints of it, written in
 * the background within a bounded delay of a change (and at once by
 * `checkpoint` and `close`); the log is emptied only when they hold all of it.
 * Recovery loads the state files and replays the log over them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { removeLeftovers } from './atomic-file.js';
import { CheckpointWriter } from './checkpoint-writer.js';
import { DiskReserve } from './disk-reserve.js';
import { DurableState, type DurableOp } from '../../ports/durable-state.js';
import { GroupCommit } from './group-commit.js';
import { parseLog } from './log-replay.js';
import { SerialQueue } from './serial-queue.js';
import type { HallStateStore } from '../../ports/state-store.js';
import { WAL_FILE, loadStateFiles, walLine } from './state-files.js';
import { WriteAheadLog } from './write-ahead-log.js';
import { errorMessage } from '../../domain/error-message.js';
import { definedFields } from '../../domain/defined-fields.js';

export { RESERVE_FILE } from './disk-reserve.js';

/** A background checkpoint also empties the log once it has grown past this. */
const WAL_TRUNCATE_BYTES = 1 << 20;
/** A background checkpoint that failed is tried again this much later. */
const RETRY_DELAY_MS = 1000;
/** Operations nobody waits on before their next fdatasync (see the top). */
const SYNC_LATER: ReadonlySet<DurableOp['op']> = new Set(['pid', 'end']);

export interface FileStateStoreOptions {
  /** Problems worth a line in the hall's log (unreadable files, write failures). */
  warn: (message: string) => void;
  /** Log syncs up to this long (on average) are done on the event loop (write-ahead-log.ts); 0: always on the thread pool. */
  inlineSyncMs?: number;
}

type FailureKind = 'wal' | 'files';

export class FileStateStore implements HallStateStore {
  readonly state = new DurableState();
  private readonly log: WriteAheadLog;
  private readonly reserve: DiskReserve;
  private readonly commits = new GroupCommit(
    () => this.syncLog(),
    () => this.log.syncInline,
  );
  private readonly files: CheckpointWriter;
  /** Checkpoints run one at a time; a background one asked for while one waits is the same one. */
  private readonly checkpoints = new SerialQueue();
  /** Lines not yet in the log file (only after a failed append). */
  private unwritten: string[] = [];
  /** The current failure of each kind of write, for `status` and the hall's log (null: it works). */
  private readonly failures: Record<FailureKind, string | null> = { wal: null, files: null };
  /** How many operations the files held when they were last written (see truncateLog). */
  private renderedAt = -1;
  private closed = false;
  /** An append at the end of this turn is due (see apply). */
  private appendScheduled = false;

  private constructor(
    private readonly dir: string,
    private readonly options: FileStateStoreOptions,
  ) {
    this.log = new WriteAheadLog(path.join(dir, WAL_FILE), definedFields({ inlineSyncMs: options.inlineSyncMs }));
    this.reserve = new DiskReserve(dir, options.warn);
    this.files = new CheckpointWriter(dir, this.state, () => void this.checkpoints.once('background', () => this.background()));
  }

  /** Loads the state files (after removing what a crashed checkpoint left), replays the log over them, and writes a fresh checkpoint. */
  static async open(dir: string, options: FileStateStoreOptions): Promise<FileStateStore> {
    await fs.promises.mkdir(dir, { recursive: true });
    removeLeftovers(dir);
    const store = new FileStateStore(dir, options);
    const differs = loadStateFiles(dir, store.state, options.warn);
    // After a clean stop the files hold everything and the log is empty: writing them
    // all again (megabytes for a long queue) would only delay the start.
    if (store.replayLog() || differs) await store.checkpoint();
    store.reserve.take();
    return store;
  }

  apply(op: DurableOp): void {
    if (this.closed) throw new Error('state store is closed');
    this.state.apply(op, this.files.dirty);
    this.unwritten.push(walLine(op));
    const later = SYNC_LATER.has(op.op);
    this.commits.note(later);
    // Nobody waits on a commit of a pid or an end: they go to the log at once. The rest
    // of this turn's operations go in one append at its end (a burst of spawns is one
    // write, not one per spawn); a commit, `written` and `accepting` append them first.
    if (later) this.writeThrough();
    else this.appendSoon();
    this.files.schedule();
  }

  written(): boolean {
    this.writeThrough();
    return this.unwritten.length === 0;
  }

  commit(): Promise<void> {
    return this.commits.commit();
  }

  /** Everything durable, every state file written, the log emptied (unless a write fails). */
  checkpoint(): Promise<void> {
    return this.checkpoints.once('now', async () => {
      this.files.markAll();
      await this.writeCheckpoint();
      await this.truncateLog();
    });
  }

  async close(): Promise<void> {
    await this.checkpoint();
    this.closed = true;
    this.files.stop();
    await this.checkpoints.drained();
    this.log.close();
  }

  lastError(): string | null {
    this.retryReserve();
    return this.reserve.full ?? this.failures.wal ?? this.failures.files;
  }

  accepting(): boolean {
    // Only a failed append is tried again here; one still waiting for the end of this turn is not forced.
    if (this.failures.wal !== null && !this.written()) return false;
    this.retryReserve();
    return this.reserve.full === null;
  }

  /** The background checkpoint: changed files only, and the log emptied once it is big. */
  private async background(): Promise<void> {
    if (this.closed) return;
    try {
      await this.writeCheckpoint();
      if (this.log.bytes > WAL_TRUNCATE_BYTES) await this.truncateLog();
    } catch {
      // Reported by writeCheckpoint; the log still holds everything.
      this.files.schedule(RETRY_DELAY_MS);
    }
  }

  /**
   * Syncs every operation (the later ones too: the files must not hold what
   * the log could lose), then writes the changed files. A sync failure is
   * thrown; a file failure is reported and leaves the files changed.
   */
  private async writeCheckpoint(): Promise<void> {
    await this.commits.commitAll();
    const rendered = this.commits.count;
    try {
      await this.files.write();
    } catch (err) {
      this.report('files', `cannot write state files in ${this.dir}: ${errorMessage(err)}`);
      this.files.schedule(RETRY_DELAY_MS);
      return;
    }
    this.recovered('files');
    this.renderedAt = rendered;
  }

  /**
   * Empties the log once the files hold everything in it: nothing changed
   * since they were rendered, and nothing left to append.
   */
  private async truncateLog(): Promise<void> {
    if (!this.files.clean || this.commits.count !== this.renderedAt || this.unwritten.length > 0) return;
    await this.log.truncate();
  }

  /** Appends what was applied at the end of this turn of the event loop. */
  private appendSoon(): void {
    if (this.appendScheduled) return;
    this.appendScheduled = true;
    queueMicrotask(() => {
      this.appendScheduled = false;
      if (this.closed) return;
      this.writeThrough();
      // The sync starts now, not when a reply first waits for it: a run's
      // record is then durable while its raider is being spawned, and the
      // spawn's reply, which waits for the record, goes out with the pid.
      // (A failure is reported by the sync and thrown to those who wait.)
      this.commits.commit().catch(() => undefined);
    });
  }

  /** Appends what was applied to the log now; a failure leaves it for the next try. */
  private writeThrough(): Error | null {
    if (this.unwritten.length === 0) return null;
    try {
      this.log.append(`${this.unwritten.join('\n')}\n`, (err) => this.spendReserve(err));
    } catch (err) {
      const failure = err instanceof Error ? err : new Error(String(err));
      this.report('wal', `cannot write ${this.log.file}: ${failure.message}`);
      return failure;
    }
    this.unwritten = [];
    return null;
  }

  /** The disk is full: the first time, the reserve makes room for what was accepted. */
  private spendReserve(err: Error): boolean {
    if (this.reserve.full !== null) return false;
    this.reserve.spend(err.message);
    return true;
  }

  private retryReserve(): void {
    if (!this.closed) this.reserve.retry();
  }

  /** The group commit's sync: append what is left over, then fdatasync. */
  private async syncLog(): Promise<void> {
    // A sync started just before close() (an operation applied while it checkpointed) must not reopen the log.
    if (this.closed) throw new Error('the hall could not record this on disk: its state store is closed');
    try {
      const failure = this.writeThrough();
      if (failure) throw failure;
      await this.log.sync();
    } catch (err) {
      this.report('wal', `cannot write ${this.log.file}: ${errorMessage(err)}`);
      throw new Error(`the hall could not record this on disk: ${errorMessage(err)}`);
    }
    this.recovered('wal');
  }

  /**
   * Replays the log over the loaded files; a torn last line is cut off, so the
   * next append starts a line of its own. True when the log held anything.
   */
  private replayLog(): boolean {
    const text = this.log.read();
    for (const op of parseLog(text, this.log.file, this.options.warn)) this.state.apply(op, this.files.dirty);
    if (text !== '' && !text.endsWith('\n')) this.log.cutAfterLastLine(text);
    return text !== '';
  }

  /**
   * A storage failure for `status` and the hall's log. The store retries every
   * second while the disk is full: the log gets each different failure once,
   * and one line when writing works again.
   */
  private report(kind: FailureKind, error: string): void {
    if (this.failures[kind] !== error) this.options.warn(error);
    this.failures[kind] = error;
  }

  private recovered(kind: FailureKind): void {
    if (this.failures[kind] === null) return;
    this.failures[kind] = null;
    if (this.failures.wal === null && this.failures.files === null) this.options.warn(`state written again in ${this.dir}`);
  }
}
