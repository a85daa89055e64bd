/**
 * How long missions waited in a queue: from a mission's `raider.queued` to
 * the `raider.spawned` of its run, per slot. The dashboard keeps them in
 * `.raider-hall/dashboard-waits.jsonl` (one `{"t": MS, "slot": S, "wait": SECONDS}`
 * line per run that had waited, the last day of them), so a restart keeps
 * the figures; a mission that started at once never waited and is not counted.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { EventBus } from '../../ports/bus.js';
import { readTimedLines, trimTimedLines } from './timed-lines.js';

/** Missions waiting now whose queueing time is remembered, at most (the oldest are forgotten first). */
const QUEUED_KEPT = 20_000;
/** Waits older than this are dropped when the hall starts. */
const WAITS_KEPT_MS = 24 * 60 * 60 * 1000;

const waitSchema = z.object({ t: z.number(), slot: z.string(), wait: z.number() });
export type QueueWait = z.infer<typeof waitSchema>;

export class QueueWaits {
  private readonly file: string;
  /** Epoch seconds of each waiting mission's first `raider.queued`, by mission id. */
  private readonly queuedAt = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(
    root: string,
    bus: EventBus,
    private readonly log: (line: string) => void,
  ) {
    this.file = path.join(root, '.raider-hall', 'dashboard-waits.jsonl');
    this.trim();
    this.unsubscribe = bus.subscribe({
      filter: 'raider.',
      receive: (event) => {
        if (event.type === 'raider.queued') this.queued(event.mission_id, event.time);
        else if (event.type === 'raider.spawned') this.spawned(event.mission_id, event.slot, event.time);
        else if (event.type === 'raider.refused' || event.type === 'raider.dropped') this.forget(event);
      },
    });
  }

  private queued(missionId: string, time: number): void {
    // A mission that moves on to another queue (a binding's, then its slot's) waited since the first.
    if (this.queuedAt.has(missionId)) return;
    this.queuedAt.set(missionId, time);
    if (this.queuedAt.size > QUEUED_KEPT) this.queuedAt.delete(this.queuedAt.keys().next().value ?? '');
  }

  private forget(event: object): void {
    const missionId = Object.getOwnPropertyDescriptor(event, 'mission_id')?.value;
    if (typeof missionId === 'string') this.queuedAt.delete(missionId);
  }

  private spawned(missionId: string, slot: string, time: number): void {
    const queued = this.queuedAt.get(missionId);
    if (queued === undefined) return;
    this.queuedAt.delete(missionId);
    const wait: QueueWait = { t: Math.round(time * 1000), slot, wait: Math.max(0, Math.round((time - queued) * 1000) / 1000) };
    try {
      fs.appendFileSync(this.file, `${JSON.stringify(wait)}\n`);
    } catch (err) {
      // The chart misses a wait; the hall goes on.
      this.log(`dashboard: cannot write ${this.file}: ${String(err)}`);
    }
  }

  /** Keeps the last day of waits. */
  private trim(): void {
    trimTimedLines(this.file, waitSchema, Date.now() - WAITS_KEPT_MS);
  }

  /** The waits of runs that started since `from` (epoch ms), oldest first. */
  read(from: number): QueueWait[] {
    return readTimedLines(this.file, waitSchema, from);
  }

  close(): void {
    this.unsubscribe();
  }
}
