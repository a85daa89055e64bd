/**
 * keep_events: only the newest N events files of each slot
 * are kept; older ones go when a run of the slot ends, but never the file of
 * a run still going. The files of each slot are known in memory (one
 * directory read at start), so a run's end costs only the files it removes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errorCode, errorMessage } from '../../domain/error-message.js';
import { compareRunCursors, parseRunId, type RunIdCursor } from '../../domain/run-id.js';

const SUFFIX = '.events.jsonl';
const DONE: Promise<void> = Promise.resolve();

export class EventsRetention {
  /** Per slot, its runs' ids, oldest first. */
  private readonly files = new Map<string, Array<{ id: string; cursor: RunIdCursor }>>();
  /** Told once the files a run's end removed are gone. */
  private readonly pruned = new Set<() => void>();

  constructor(
    private readonly logsDir: string,
    private readonly keep: number,
    private readonly warn: (message: string) => void,
  ) {}

  /** Reads what a previous hall left; returns the newest run id of each slot. */
  load(): Record<string, RunIdCursor> {
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.logsDir);
    } catch {
      return {};
    }
    for (const name of names) {
      if (!name.endsWith(SUFFIX)) continue;
      const id = name.slice(0, -SUFFIX.length);
      const parsed = parseRunId(id);
      if (parsed) this.listOf(parsed.slot).push({ id, cursor: parsed.cursor });
    }
    const newest: Record<string, RunIdCursor> = {};
    for (const [slot, list] of this.files) {
      list.sort((a, b) => compareRunCursors(a.cursor, b.cursor));
      const last = list.at(-1);
      if (last) newest[slot] = last.cursor;
    }
    return newest;
  }

  /** A run of the slot started: its events file exists now. */
  started(runId: string): void {
    const parsed = parseRunId(runId);
    if (!parsed) return;
    const list = this.listOf(parsed.slot);
    if (list.some((f) => f.id === runId)) return;
    list.push({ id: runId, cursor: parsed.cursor });
    // Ids grow within a slot; a run adopted from a previous hall may be older.
    const before = list.at(-2);
    if (before && compareRunCursors(before.cursor, parsed.cursor) > 0) list.sort((a, b) => compareRunCursors(a.cursor, b.cursor));
  }

  /**
   * A run of the slot ended: the files older than the newest `keep` go,
   * except those of live runs (they go at a later end). A live old run is no
   * reason to remove a newer file instead: in a burst of many more runs than
   * `keep`, that left the oldest runs' files and removed the newest.
   * Resolves once the files are gone (or could not be removed: said in the log),
   * after the `onPruned` listeners.
   */
  ended(slot: string, live: (runId: string) => boolean): Promise<void> {
    if (this.keep <= 0) return DONE;
    const list = this.files.get(slot);
    if (!list) return DONE;
    const beyond = list.length - this.keep;
    const kept: typeof list = [];
    const removals: Promise<void>[] = [];
    for (const [i, file] of list.entries()) {
      if (i < beyond && !live(file.id)) removals.push(this.remove(`${file.id}${SUFFIX}`));
      else kept.push(file);
    }
    this.files.set(slot, kept);
    if (removals.length === 0) return DONE;
    return Promise.all(removals).then(() => {
      for (const listener of [...this.pruned]) listener();
    });
  }

  /** `listener` is called each time files removed at a run's end are gone; returns its unsubscribe. */
  onPruned(listener: () => void): () => void {
    this.pruned.add(listener);
    return () => this.pruned.delete(listener);
  }

  /**
   * On the thread pool: an unlink frees the file's blocks in the file
   * system's journal, and waits for a journal commit under way (the log's
   * fdatasync, a checkpoint's fsync): 0.28 ms median and up to 2 ms in the
   * hall at a run's end, against ~0.1 ms of this thread to hand it over
   * (bench/RESULTS.md). Nothing waits for it.
   */
  private remove(name: string): Promise<void> {
    return new Promise((resolve) => {
      fs.unlink(path.join(this.logsDir, name), (err) => {
        if (err && errorCode(err) !== 'ENOENT') this.warn(`cannot remove ${name}: ${errorMessage(err)}`);
        resolve();
      });
    });
  }

  private listOf(slot: string): Array<{ id: string; cursor: RunIdCursor }> {
    let list = this.files.get(slot);
    if (!list) {
      list = [];
      this.files.set(slot, list);
    }
    return list;
  }
}
