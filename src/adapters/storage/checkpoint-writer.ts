/**
 * The checkpoint writer: which state files a change touched, when they are
 * written again (in the background, CHECKPOINT_DELAY_MS after the first
 * change since the last checkpoint, or longer when writing them takes long),
 * and writing them atomically.
 */
import path from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { isClean, noDirt, type DirtyFiles, type DurableState } from '../../ports/durable-state.js';
import {
  BINDING_QUEUES_FILE,
  RUNS_FILE,
  SESSIONS_FILE,
  kvFile,
  renderBindingQueues,
  renderKv,
  renderRuns,
  renderSessions,
  renderSlotQueue,
  slotQueueFile,
} from './state-files.js';

/**
 * A checkpoint is due this long after the first change since the last one;
 * writing it takes the rest of the 100 ms the files may lag (docs/storage.md).
 */
export const CHECKPOINT_DELAY_MS = 50;
/**
 * A background checkpoint waits at least this many times as long as the hall
 * took to render the files of the last one. A checkpoint writes whole files,
 * so a slot with 100,000 waiting missions renders megabytes each time:
 * without this, a long queue would spend the hall's time rendering its file
 * every 50 ms, a cost per change that grows with the queue. With it,
 * rendering takes at most about a fifth of the hall's time, however long the
 * queues; files of short queues render in well under a millisecond and keep
 * the 50 ms.
 */
const CHECKPOINT_COST_FACTOR = 4;

export class CheckpointWriter {
  /** The files changed since they were last written; `DurableState.apply` marks them. */
  readonly dirty: DirtyFiles = noDirt();
  private timer: NodeJS.Timeout | null = null;
  /**
   * How long rendering the files of the last checkpoint took (ms), the hall's
   * own time on it (the disk's time is not): the next background one waits
   * CHECKPOINT_COST_FACTOR times that.
   */
  private lastRenderMs = 0;

  /** `due` is called when a checkpoint should be written (it writes it through `write`). */
  constructor(
    private readonly dir: string,
    private readonly state: DurableState,
    private readonly due: () => void,
  ) {}

  get clean(): boolean {
    return isClean(this.dirty);
  }

  /** Something may have changed: a checkpoint becomes due within `delayMs` unless one already is. */
  schedule(delayMs = Math.max(CHECKPOINT_DELAY_MS, CHECKPOINT_COST_FACTOR * this.lastRenderMs)): void {
    if (this.timer || this.clean) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.due();
    }, delayMs);
    this.timer.unref();
  }

  /** Every file counts as changed (a full checkpoint, or after a failed write). */
  markAll(): void {
    for (const slot of this.state.slotQueues.keys()) this.dirty.slots.add(slot);
    for (const ns of this.state.kv.keys()) this.dirty.kv.add(ns);
    this.dirty.bindingQueues = this.dirty.sessions = this.dirty.runs = true;
  }

  /** Writes every changed file; on failure all of them count as changed again and the error is thrown. */
  async write(): Promise<void> {
    const writes = this.takeDirty();
    let renderMs = 0;
    try {
      for (const [name, render] of writes) {
        const started = performance.now();
        const text = render();
        renderMs += performance.now() - started;
        await writeFileAtomic(path.join(this.dir, name), text);
      }
      this.lastRenderMs = renderMs;
    } catch (err) {
      // The log still holds these changes: write them all next time.
      this.markAll();
      throw err;
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The changed files, each with how to render it (at write time, so it is as fresh as can be). */
  private takeDirty(): Array<[string, () => string]> {
    const dirty = this.dirty;
    const writes: Array<[string, () => string]> = [];
    for (const slot of dirty.slots) writes.push([slotQueueFile(slot), () => renderSlotQueue(this.state.slotQueues.get(slot) ?? [])]);
    dirty.slots.clear();
    for (const ns of dirty.kv) writes.push([kvFile(ns), () => renderKv(this.state, ns)]);
    dirty.kv.clear();
    if (dirty.bindingQueues) writes.push([BINDING_QUEUES_FILE, () => renderBindingQueues(this.state)]);
    if (dirty.sessions) writes.push([SESSIONS_FILE, () => renderSessions(this.state)]);
    if (dirty.runs) writes.push([RUNS_FILE, () => renderRuns(this.state)]);
    dirty.bindingQueues = dirty.sessions = dirty.runs = false;
    return writes;
  }
}
