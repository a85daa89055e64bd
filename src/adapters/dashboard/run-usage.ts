/**
 * What a run's agent used, from its events file: the last `usage` event
 * (docs/raider.md "Events": tokens in the agent's context and the session's
 * cumulative cost, so the last one is the run's). Read once per file version.
 */
import fs from 'node:fs';
import { z } from 'zod';
import { readJsonLinesTail } from './json-lines-tail.js';
import { Cost } from '../../domain/run-usage.js';

/** The usage event comes just before the final message and the run's end: this much of the tail holds it. */
const TAIL_BYTES = 256 * 1024;
const KEPT = 5000;

const usageLineSchema = z.looseObject({
  type: z.literal('usage'),
  context_used: z.number(),
  cost: Cost.optional(),
});

/** A run's tokens and cost as the charts count them. */
export interface ChartUsage {
  tokens: number;
  cost?: Cost;
}

export class RunUsages {
  private readonly cache = new Map<string, { mtimeMs: number; size: number; usage: ChartUsage | null }>();

  /** The run's usage, or null when its agent reported none. */
  of(file: string): ChartUsage | null {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) return null;
    const cached = this.cache.get(file);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.usage;
    let usage: ChartUsage | null = null;
    for (const line of readJsonLinesTail(file, TAIL_BYTES)?.lines ?? []) {
      const parsed = usageLineSchema.safeParse(line);
      if (parsed.success)
        usage = parsed.data.cost ? { tokens: parsed.data.context_used, cost: parsed.data.cost } : { tokens: parsed.data.context_used };
    }
    this.cache.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, usage });
    if (this.cache.size > KEPT) this.cache.delete(this.cache.keys().next().value ?? '');
    return usage;
  }
}
