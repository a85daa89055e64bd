/**
 * The figures behind the dashboard's charts: runs per minute by outcome and
 * durations per raider (median, p90) from the runs the events files hold, so
 * a restart keeps them for as long as `logs.keep_events` keeps the files; and
 * the queue depth over time from a sample file the dashboard keeps
 * (`.raider-hall/dashboard-queue.jsonl`: one `{"t": MS, "depth": N}` line per
 * change, at most one a second, the last day of them).
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { EventBus } from '../../ports/bus.js';
import type { HallQueries } from '../../ports/hall-queries.js';
import type { RunHistory, RunRow } from './run-history.js';

export const OUTCOMES = ['completed', 'failed', 'cancelled', 'interrupted'] as const;
/** The queue is looked at no more than once per this, however busy the bus. */
const SAMPLE_MS = 1000;
/** Samples older than this are dropped when the hall starts. */
const SAMPLES_KEPT_MS = 24 * 60 * 60 * 1000;

export const chartQuerySchema = z.object({ minutes: z.coerce.number().int().min(1).max(1440).default(180) });

export interface ChartData {
  /** The window: epoch ms of its first minute, and its length. */
  from: number;
  minutes: number;
  /** Epoch seconds of each minute that had an ended run, and the runs per outcome that ended in it. */
  runs_per_minute: { minute: number[] } & Record<(typeof OUTCOMES)[number] | 'other', number[]>;
  /** Per raider (the slot without its digit prefix): ended runs in the window, median and p90 duration in seconds. */
  durations: Array<{ raider: string; runs: number; median: number; p90: number }>;
  /** Epoch seconds and the missions waiting then (all slot and binding queues). */
  queue_depth: { time: number[]; depth: number[] };
}

const sampleSchema = z.object({ t: z.number(), depth: z.number() });

/** The sample file of the queue depth, written as the queues change. */
export class QueueDepthSamples {
  private readonly file: string;
  private timer: NodeJS.Timeout | undefined;
  private last = -1;
  private readonly unsubscribe: () => void;

  constructor(
    root: string,
    bus: EventBus,
    private readonly queries: HallQueries,
    private readonly log: (line: string) => void,
  ) {
    this.file = path.join(root, '.raider-hall', 'dashboard-queue.jsonl');
    this.trim();
    this.unsubscribe = bus.subscribe({ filter: 'raider.', receive: () => this.schedule() });
    this.sample();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.sample();
    }, SAMPLE_MS);
  }

  private depth(): number {
    const status = this.queries.status();
    let depth = 0;
    for (const n of Object.values('queues' in status ? status.queues : {})) depth += n;
    for (const n of Object.values('binding_queues' in status ? status.binding_queues : {})) depth += n;
    return depth;
  }

  private sample(): void {
    const depth = this.depth();
    if (depth === this.last) return;
    this.last = depth;
    try {
      fs.appendFileSync(this.file, `${JSON.stringify({ t: Date.now(), depth })}\n`);
    } catch (err) {
      // The chart misses a point; the hall goes on.
      this.log(`dashboard: cannot write ${this.file}: ${String(err)}`);
    }
  }

  /** Keeps the last day of samples. */
  private trim(): void {
    const kept = this.read(Date.now() - SAMPLES_KEPT_MS);
    try {
      fs.writeFileSync(this.file, kept.map((s) => `${JSON.stringify(s)}\n`).join(''));
    } catch {
      /* no directory yet or not writable: sample() says so */
    }
  }

  /** The samples since `from` (epoch ms), oldest first. */
  read(from: number): Array<{ t: number; depth: number }> {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    const samples: Array<{ t: number; depth: number }> = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const s = sampleSchema.safeParse(JSON.parse(line));
        if (s.success && s.data.t >= from) samples.push(s.data);
      } catch {
        /* a half line */
      }
    }
    return samples;
  }

  close(): void {
    this.unsubscribe();
    clearTimeout(this.timer);
  }
}

/** The value below which `q` of the sorted values lie (nearest rank). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

const round = (n: number): number => Math.round(n * 1000) / 1000;

export function chartData(history: RunHistory, samples: QueueDepthSamples, minutes: number, now: number = Date.now()): ChartData {
  const from = Math.floor((now - minutes * 60_000) / 60_000) * 60_000;
  const ended = history
    .list({ offset: 0, limit: Number.MAX_SAFE_INTEGER })
    .runs.filter((r): r is RunRow & { duration: number } => r.duration !== null && r.started_at + r.duration * 1000 >= from);

  const perMinute = new Map<number, Map<string, number>>();
  const durations = new Map<string, number[]>();
  for (const run of ended) {
    const minute = Math.floor((run.started_at + run.duration * 1000) / 60_000) * 60;
    const counts = perMinute.get(minute) ?? new Map<string, number>();
    const outcome = (OUTCOMES as readonly string[]).includes(run.status) ? run.status : 'other';
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    perMinute.set(minute, counts);
    const raider = run.slot.replace(/^\d+/, '') || run.slot;
    const list = durations.get(raider);
    if (list === undefined) durations.set(raider, [run.duration]);
    else list.push(run.duration);
  }
  const minuteKeys = [...perMinute.keys()].sort((a, b) => a - b);
  const column = (outcome: string) => minuteKeys.map((m) => perMinute.get(m)?.get(outcome) ?? 0);

  const depth = samples.read(from);
  return {
    from,
    minutes,
    runs_per_minute: {
      minute: minuteKeys,
      completed: column('completed'),
      failed: column('failed'),
      cancelled: column('cancelled'),
      interrupted: column('interrupted'),
      other: column('other'),
    },
    durations: [...durations.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([raider, values]) => {
        const sorted = [...values].sort((a, b) => a - b);
        return { raider, runs: sorted.length, median: round(quantile(sorted, 0.5)), p90: round(quantile(sorted, 0.9)) };
      }),
    queue_depth: { time: depth.map((s) => s.t / 1000), depth: depth.map((s) => s.depth) },
  };
}
