/**
 * A hall of a shared cluster ships what its runs write (their events files,
 * their lines of the slot log) to the cluster as the runs go, so `attach` and
 * `logs` on another hall can show them: every half second (the cluster
 * worker's beat), what each run appended since; and when a run ends, the rest,
 * before its raider.done goes to the other halls.
 */
import fs from 'node:fs';
import type { OutputPiece, RunOutputs } from '../ports/cluster-queue.js';
import { eventsPath, slotLogPath, type HallPaths } from '../ports/hall-paths.js';
import { runSection } from '../domain/log-lines.js';
import type { DurableState } from '../ports/durable-state.js';
import { errorMessage } from '../domain/error-message.js';

/** At most this much of one file per beat: a chatty run does not hold up the others. */
const MAX_PIECE = 1 << 20;
/** A run out of the ledger this long without its raider.done (which ships its rest) will not have one here. */
const FORGET_MS = 60_000;

interface Shipped {
  eventsPath: string;
  slot: string;
  /** Bytes of each stream the cluster has. */
  events: number;
  log: number;
  /** When the run was last in this hall's ledger (epoch ms). */
  seen: number;
}

export class RunOutputShipper {
  private readonly runs = new Map<string, Shipped>();
  /** One shipment at a time, in order: offsets move only once a shipment is in. */
  private chain: Promise<void> = Promise.resolve();
  private lastProblem: string | null = null;

  constructor(
    private readonly outputs: RunOutputs,
    private readonly paths: HallPaths,
    private readonly state: Pick<DurableState, 'runs'>,
    private readonly log: (line: string) => void,
  ) {}

  /** Ships what this hall's runs appended since the last beat. */
  beat(): Promise<void> {
    return this.enqueue(async () => {
      const now = Date.now();
      for (const [id, run] of this.state.runs) {
        const shipped = this.runs.get(id);
        if (shipped) shipped.seen = now;
        else this.runs.set(id, { eventsPath: run.events_path, slot: run.slot, events: 0, log: 0, seen: now });
      }
      // A run that left the ledger without a raider.done here (stopped after this hall was taken for lost) is forgotten.
      for (const [id, run] of this.runs) if (now - run.seen > FORGET_MS) this.runs.delete(id);
      await this.ship([...this.runs.keys()], false);
    });
  }

  /** The run ended (its files are complete): ships the rest of its output and forgets it. */
  final(runId: string, slot: string): Promise<void> {
    return this.enqueue(async () => {
      if (!this.runs.has(runId))
        this.runs.set(runId, { eventsPath: eventsPath(this.paths, runId), slot, events: 0, log: 0, seen: Date.now() });
      await this.ship([runId], true);
      this.runs.delete(runId);
    });
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.chain.then(work).catch((err: unknown) => {
      const problem = `cannot ship the output of runs to the cluster: ${errorMessage(err)}`;
      if (problem !== this.lastProblem) this.log(problem);
      this.lastProblem = problem;
    });
    this.chain = next;
    return next;
  }

  private async ship(ids: readonly string[], whole: boolean): Promise<void> {
    const pieces: OutputPiece[] = [];
    const moved: Array<() => void> = [];
    // Each slot log is read once per shipment, and only when it changed since the last one.
    const logs = new Map<string, { text: string; size: number } | null>();
    const slotLog = (slot: string): string | null => {
      if (!logs.has(slot)) logs.set(slot, this.readSlotLog(slot, whole));
      return logs.get(slot)?.text ?? null;
    };
    // Sizes count as read once what was read from them is shipped (a failed shipment is read again).
    const seen = () => {
      for (const [slot, read] of logs) if (read !== null) this.logSizes.set(slot, read.size);
    };
    for (const id of ids) {
      const run = this.runs.get(id);
      if (!run) continue;
      const events = readFrom(run.eventsPath, run.events, whole ? Number.POSITIVE_INFINITY : MAX_PIECE);
      if (events.length > 0) {
        pieces.push({ runId: id, stream: 'events', start: run.events, data: events });
        moved.push(() => (run.events += events.length));
      }
      const text = slotLog(run.slot);
      const log = text === null ? Buffer.alloc(0) : Buffer.from(runSection(text, id).text);
      // A run's lines only grow while it runs (the slot log rotates before a run starts, never during one).
      if (log.length > run.log) {
        const start = run.log;
        pieces.push({ runId: id, stream: 'log', start, data: log.subarray(start) });
        moved.push(() => (run.log = log.length));
      }
    }
    if (pieces.length > 0) await this.outputs.ship(pieces);
    for (const move of moved) move();
    seen();
    this.lastProblem = null;
  }

  /** Sizes of the slot logs at the last read: an unchanged log holds nothing new for any run. */
  private readonly logSizes = new Map<string, number>();

  /** The slot log's text; null when it did not change since the last read (`always`: read it anyway) or cannot be read. */
  private readSlotLog(slot: string, always: boolean): { text: string; size: number } | null {
    const file = slotLogPath(this.paths, slot);
    const size = fs.statSync(file, { throwIfNoEntry: false })?.size;
    if (size === undefined) return null;
    if (!always && this.logSizes.get(slot) === size) return null;
    try {
      return { text: fs.readFileSync(file, 'utf8'), size };
    } catch {
      return null;
    }
  }
}

/** The file's bytes from `offset`, at most `max` of them (none when it cannot be read). */
function readFrom(file: string, offset: number, max: number): Buffer {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return Buffer.alloc(0);
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size <= offset) return Buffer.alloc(0);
    const buf = Buffer.alloc(Math.min(size - offset, max));
    const n = fs.readSync(fd, buf, 0, buf.length, offset);
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}
