/**
 * What the hall keeps about each cron job across restarts (state/cron.json,
 * one key per job id), and how a job's last outcome follows its run. Times
 * are ISO strings so the file reads well.
 */
import { z } from 'zod';
import { isRecord } from './records.js';

const CRON_RESULTS = [
  /** A run started at once. */
  'started',
  /** The mission waits (binding or slot queue). */
  'queued',
  /** The hall refused the raider entry; nothing ran. */
  'refused',
  /** The hall answered with an error; nothing ran. */
  'error',
  /** The previous occurrence had not ended (coalesce: true). */
  'coalesced',
  /** Missed while the hall was down, and catch_up is skip. */
  'skipped',
  /** The hall stopped while handing this occurrence over and it was not found afterwards; not fired again. */
  'unknown',
] as const;

export type CronResult = (typeof CRON_RESULTS)[number];

/** A job's last outcome as state/cron.json keeps it; read back through this schema, not cast. */
const CronOutcomeSchema = z.object({
  /** The occurrence (scheduled time). */
  slot: z.string(),
  result: z.enum(CRON_RESULTS),
  /** When it was handled. */
  at: z.string(),
  /** A missed occurrence run at start-up (catch_up: once). */
  catch_up: z.boolean().optional(),
  mission_id: z.string().optional(),
  raider_id: z.string().optional(),
  /** How the run ended: completed, failed, cancelled, interrupted. */
  status: z.string().optional(),
  error: z.string().optional(),
});

export type CronOutcome = z.infer<typeof CronOutcomeSchema>;

export interface CronJobRecord {
  /** The last occurrence handled (fired, coalesced or skipped); null before the first. */
  slot: string | null;
  /** When the hall first armed the job: occurrences after it count as missed until one is handled. */
  since: string;
  /**
   * An occurrence being handed to the hall: written before the spawn request
   * and replaced by its outcome, so a hall that dies in between knows the
   * slot was taken and never fires it twice.
   */
  pending?: { slot: string; mission_id: string };
  last?: CronOutcome;
}

const iso = (ms: number): string => new Date(ms).toISOString();

const validTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));

/** A record read back from disk; anything unreadable is null (the job starts afresh). */
export function readCronRecord(raw: unknown): CronJobRecord | null {
  if (!isRecord(raw) || !validTime(raw.since)) return null;
  if (raw.slot !== null && !validTime(raw.slot)) return null;
  const record: CronJobRecord = { slot: raw.slot, since: raw.since };
  const pending = raw.pending;
  if (isRecord(pending) && validTime(pending.slot) && typeof pending.mission_id === 'string') {
    record.pending = { slot: pending.slot, mission_id: pending.mission_id };
  }
  const last = CronOutcomeSchema.safeParse(raw.last);
  if (last.success && validTime(last.data.slot)) record.last = last.data;
  return record;
}

export function newCronRecord(nowMs: number): CronJobRecord {
  return { slot: null, since: iso(nowMs) };
}

/** Occurrences after this time are the job's to handle. */
export function handledUpTo(record: CronJobRecord): number {
  return Date.parse(record.pending?.slot ?? record.slot ?? record.since);
}

/** The record while occurrence `slotMs` is handed over as mission `missionId`. */
export function withPending(record: CronJobRecord, slotMs: number, missionId: string): CronJobRecord {
  return { ...record, slot: iso(slotMs), pending: { slot: iso(slotMs), mission_id: missionId } };
}

/** The record once occurrence `outcome.slot` is handled. */
export function withOutcome(record: CronJobRecord, outcome: CronOutcome): CronJobRecord {
  const { pending: _pending, ...rest } = record;
  return { ...rest, slot: outcome.slot, last: outcome };
}

/** The hall's answer to a cron occurrence's spawn, as an outcome. */
export function outcomeFromReply(
  slotMs: number,
  missionId: string,
  reply: Readonly<Record<string, unknown>>,
  atMs: number,
  late: boolean,
): CronOutcome {
  const base: CronOutcome = {
    slot: iso(slotMs),
    result: 'error',
    at: iso(atMs),
    mission_id: missionId,
    ...(late ? { catch_up: true } : {}),
  };
  if (typeof reply.id === 'string') return { ...base, result: 'started', raider_id: reply.id };
  if (reply.queued !== undefined) return { ...base, result: 'queued' };
  if (reply.status === 'refused') return { ...base, result: 'refused', error: String(reply.error ?? reply.reason ?? 'refused') };
  return { ...base, error: String(reply.error ?? 'no answer from the hall') };
}

/** An occurrence handled without a run (coalesced or skipped). */
export function outcomeWithoutRun(slotMs: number, result: 'coalesced' | 'skipped', atMs: number): CronOutcome {
  return { slot: iso(slotMs), result, at: iso(atMs) };
}

/**
 * A previous hall stopped with an occurrence half handed over: the mission
 * is running, waiting, or nowhere to be found. In the last case it either
 * never reached the hall or already ran; it is not fired again either way.
 */
export function resolvePending(
  record: CronJobRecord,
  found: { where: 'running'; runId: string } | { where: 'queued' } | null,
  atMs: number,
): CronJobRecord {
  const pending = record.pending;
  if (!pending) return record;
  const base: CronOutcome = { slot: pending.slot, result: 'unknown', at: iso(atMs), mission_id: pending.mission_id };
  if (found?.where === 'running') return withOutcome(record, { ...base, result: 'started', raider_id: found.runId });
  if (found?.where === 'queued') return withOutcome(record, { ...base, result: 'queued' });
  return withOutcome(record, { ...base, error: 'the hall stopped while this occurrence was handed over; not fired again' });
}

/** A bus event about a mission's run, as far as a job's outcome cares. */
export type RunEvent =
  | { type: 'raider.spawned'; mission_id: string; id: string }
  | { type: 'raider.done'; mission_id: string; id: string; status: string; error?: string | undefined }
  | { type: 'raider.refused'; mission_id: string; error: string };

/** The outcome after a run event of its mission, or null when the event is not about it. */
export function noteRunEvent(outcome: CronOutcome | undefined, event: RunEvent): CronOutcome | null {
  if (!outcome || outcome.mission_id === undefined || event.mission_id !== outcome.mission_id) return null;
  switch (event.type) {
    case 'raider.spawned':
      return { ...outcome, result: 'started', raider_id: event.id };
    case 'raider.done': {
      const next: CronOutcome = { ...outcome, status: event.status, raider_id: event.id };
      if (event.error !== undefined) next.error = event.error;
      return next;
    }
    case 'raider.refused':
      return { ...outcome, result: 'refused', error: event.error };
  }
}
