/**
 * `attach` on a hall of a shared cluster for a run on another hall: this hall
 * keeps a copy of the run's events file and of its lines of the slot log
 * under `.raider-hall/cluster/`, filled from the cluster as the run goes (a
 * read every quarter second), and complete before the run's raider.done is
 * published here, so whoever follows the copy sees the whole run before its
 * end. The copies are removed a minute after the run's end.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { OutputStream, SharedQueue } from '../ports/cluster-queue.js';
import { errorMessage } from '../domain/error-message.js';

const READ_MS = 250;
/** How often a copy checks that its run still runs (its raider.done could have been missed). */
const HELD_MS = 2_000;
const KEEP_AFTER_END_MS = 60_000;

interface Copy {
  files: Record<OutputStream, string>;
  /** Bytes of each stream already in the copy. */
  at: Record<OutputStream, number>;
  timer: NodeJS.Timeout;
  /** One read at a time. */
  reading: Promise<void>;
  lastHeldCheck: number;
  /** The run was found gone from the cluster's runs at the last check. */
  gone: boolean;
}

export interface MirrorFiles {
  eventsPath: string;
  logPath: string;
}

export class RunOutputMirror {
  private readonly copies = new Map<string, Copy>();

  constructor(
    private readonly shared: Pick<SharedQueue, 'outputs' | 'remoteRun'>,
    private readonly dir: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Starts this hall's copy of the run on another hall (or finds it); resolves once it holds what the cluster has now. */
  async open(runId: string): Promise<MirrorFiles> {
    let copy = this.copies.get(runId);
    if (!copy) {
      fs.mkdirSync(this.dir, { recursive: true });
      const files = { events: path.join(this.dir, `${runId}.events.jsonl`), log: path.join(this.dir, `${runId}.log`) };
      for (const file of Object.values(files)) fs.writeFileSync(file, '');
      const timer = setInterval(() => void this.read(runId), READ_MS);
      timer.unref();
      copy = { files, at: { events: 0, log: 0 }, timer, reading: Promise.resolve(), lastHeldCheck: Date.now(), gone: false };
      this.copies.set(runId, copy);
    }
    await this.read(runId);
    return { eventsPath: copy.files.events, logPath: copy.files.log };
  }

  has(runId: string): boolean {
    return this.copies.has(runId);
  }

  /** The run ended: the copy gets the rest of its output and stops following; its files, null when there was no copy. */
  async finish(runId: string): Promise<MirrorFiles | null> {
    const copy = this.copies.get(runId);
    if (!copy) return null;
    clearInterval(copy.timer);
    await this.read(runId);
    this.copies.delete(runId);
    const remove = setTimeout(() => {
      for (const file of Object.values(copy.files)) fs.rmSync(file, { force: true });
    }, KEEP_AFTER_END_MS);
    remove.unref();
    return { eventsPath: copy.files.events, logPath: copy.files.log };
  }

  stop(): void {
    for (const copy of this.copies.values()) clearInterval(copy.timer);
    this.copies.clear();
  }

  private read(runId: string): Promise<void> {
    const copy = this.copies.get(runId);
    if (!copy) return Promise.resolve();
    copy.reading = copy.reading.then(async () => {
      try {
        for (const stream of ['events', 'log'] as const) {
          const more = await this.shared.outputs.read(runId, stream, copy.at[stream]);
          if (more === null || more.length === 0) continue;
          fs.appendFileSync(copy.files[stream], more);
          copy.at[stream] += more.length;
        }
        if (Date.now() - copy.lastHeldCheck >= HELD_MS && this.copies.get(runId) === copy) {
          copy.lastHeldCheck = Date.now();
          // Its end went unseen here (the relay can miss an event). Gone at two checks in a row: its last
          // output, shipped just after its end, is in by then, and the copy is as complete as it gets.
          const gone = (await this.shared.remoteRun(runId)) === null;
          if (gone && copy.gone) void this.finish(runId);
          copy.gone = gone;
        }
      } catch (err) {
        this.log(`cannot copy the output of run ${runId} from the cluster: ${errorMessage(err)}`);
      }
    });
    return copy.reading;
  }
}
