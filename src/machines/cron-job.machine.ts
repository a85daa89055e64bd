/**
 * One cron job. It owns its timer:
 *
 *   checking ──clock──▶ deciding ─┬─▶ sleeping ──after untilDue──▶ checking
 *                                 ├─▶ claiming ─┬─▶ probing (coalesce) ─┬─▶ coalescing ─▶ checking
 *                                 │             │                       └─▶ firing ─────▶ checking
 *                                 │             ├─▶ firing ──fired/failed──▶ checking
 *                                 │             └─ taken (another hall has it) ─▶ checking
 *                                 ├─▶ skipping ──recorded──▶ checking
 *                                 └─▶ exhausted (no occurrence left)
 *
 * Every wake reads the wall clock again (`readClock`) and plans from it, so
 * a timer cut short at ~24 days, a suspended machine or a clock change never
 * skips or repeats a slot silently. The machine does no I/O: reading the
 * clock, looking at the hall's queues, handing a mission over and recording a
 * handled slot are named actors the cron adapter provides, and they answer
 * with events (so a test's fakes can answer at once, under a manual clock).
 *
 * `claimSlot` decides whether this hall handles a due occurrence at all: a
 * hall alone always does (the default answers `claimed` at once); on a shared
 * cluster every hall computes the same occurrences and only the first to
 * claim one in the database fires it, the others hear `taken` and move on.
 */
import { assign, emit, fromCallback, setup, type EventObject } from 'xstate';
import { occurrenceAction, planWake, sleepMs, type CatchUp, type WakePlan } from '../domain/cron-plan.js';
import type { CronOutcome } from '../domain/cron-record.js';
import type { CronSpec } from '../domain/cron-schedule.js';
import type { BusEventOf } from '../protocol/events.js';
import { definedFields } from '../domain/defined-fields.js';

export interface CronJobInput {
  id: string;
  /** The raider the job's missions run on. */
  name: string;
  spec: CronSpec;
  coalesce: boolean;
  catchUp: CatchUp;
  /** The last occurrence handled, or when the job was first armed (epoch ms). */
  after: number;
  /** The longest single timer; the clock is read again on every wake. */
  maxSleepMs: number;
  /** How late a running job's occurrence may be and still be on time. */
  graceMs: number;
}

export interface CronJobContext extends CronJobInput {
  /** The wall clock at the last wake. */
  now: number;
  plan: WakePlan | null;
  /** True until the first plan: then everything past was missed while the hall was down. */
  starting: boolean;
}

export type CronJobEvent =
  /** readClock: the wall clock. */
  | { type: 'clock'; now: number }
  /** probe: whether the job's previous occurrence is still running or waiting. */
  | { type: 'probed'; inFlight: boolean }
  /** fire: how the hall took the occurrence (it is recorded as handled). */
  | { type: 'fired'; outcome: CronOutcome }
  /** record: a slot handled without a run is on disk. */
  | { type: 'recorded' }
  /** fire or record could not finish; the slot counts as handled all the same (never twice). */
  | { type: 'failed'; error: string }
  /** claimSlot: this hall handles the occurrence. */
  | { type: 'claimed' }
  /** claimSlot: another hall of the cluster handles it; this one moves past it. */
  | { type: 'taken' };

export type CronJobEmitted = { type: 'bus'; event: BusEventOf<'cron.fired' | 'cron.coalesced'> };

export interface ProbeInput {
  binding: string;
}
export interface FireInput {
  slot: number;
  /** A missed occurrence run at start-up (catch_up: once). */
  late: boolean;
}
export interface ClaimInput {
  slot: number;
}
export interface RecordInput {
  slot: number;
  result: 'coalesced' | 'skipped';
}

export function cronBinding(jobId: string): string {
  return `cron:${jobId}`;
}

const notProvided = (name: string) => () => {
  throw new Error(`${name} is not provided: the cron adapter binds it with machine.provide()`);
};

/** The slot the job is handling (its plan fires or skips one). */
function currentSlot(context: CronJobContext): number {
  const plan = context.plan;
  if (plan?.kind !== 'fire' && plan?.kind !== 'skip') throw new Error(`no slot in plan ${plan?.kind ?? 'null'}`);
  return plan.slot;
}

/** Events the hall publishes for a fired occurrence: the hall took it (started, queued or refused it). */
const HANDED_OVER = new Set(['started', 'queued', 'refused']);

export const cronJobMachine = setup({
  types: {} as {
    context: CronJobContext;
    input: CronJobInput;
    events: CronJobEvent;
    emitted: CronJobEmitted;
  },
  actors: {
    readClock: fromCallback<EventObject, void>(notProvided('readClock')),
    probe: fromCallback<EventObject, ProbeInput>(notProvided('probe')),
    fire: fromCallback<EventObject, FireInput>(notProvided('fire')),
    record: fromCallback<EventObject, RecordInput>(notProvided('record')),
    // A hall alone handles every occurrence.
    claimSlot: fromCallback<EventObject, ClaimInput>(({ sendBack }) => sendBack({ type: 'claimed' })),
  },
  delays: {
    untilDue: ({ context }) => (context.plan?.kind === 'sleep' ? sleepMs(context.plan.until, context.now, context.maxSleepMs) : 0),
  },
  guards: {
    planIs: ({ context }, kind: WakePlan['kind']) => context.plan?.kind === kind,
    mayCoalesce: ({ context }) => context.plan?.kind === 'fire' && context.coalesce,
    coalesces: ({ context, event }) => event.type === 'probed' && occurrenceAction(context.coalesce, event.inFlight) === 'coalesce',
  },
  actions: {
    plan: assign(({ context, event }) => {
      if (event.type !== 'clock') return {};
      const plan = planWake({
        spec: context.spec,
        after: context.after,
        now: event.now,
        graceMs: context.starting ? 0 : context.graceMs,
        catchUp: context.catchUp,
      });
      return { now: event.now, plan, starting: false };
    }),
    /** The slot is handled: plan from it next time. */
    advance: assign(({ context }) => ({ after: currentSlot(context) })),
    reportFired: emit(({ context, event }): CronJobEmitted => {
      const outcome = event.type === 'fired' ? event.outcome : undefined;
      return {
        type: 'bus',
        event: {
          type: 'cron.fired',
          id: context.id,
          name: context.name,
          slot: new Date(currentSlot(context)).toISOString(),
          ...(outcome?.raider_id !== undefined && outcome.result === 'started' ? { raider_id: outcome.raider_id } : {}),
          ...definedFields({ mission_id: outcome?.mission_id }),
          ...(outcome?.catch_up ? { catch_up: true } : {}),
        },
      };
    }),
    reportCoalesced: emit(
      ({ context }): CronJobEmitted => ({
        type: 'bus',
        event: { type: 'cron.coalesced', id: context.id, name: context.name, slot: new Date(currentSlot(context)).toISOString() },
      }),
    ),
  },
}).createMachine({
  id: 'cronJob',
  context: ({ input }) => ({ ...input, now: input.after, plan: null, starting: true }),
  initial: 'checking',
  states: {
    checking: {
      invoke: { src: 'readClock' },
      on: { clock: { target: 'deciding', actions: 'plan' } },
    },
    deciding: {
      always: [
        { guard: { type: 'planIs', params: 'sleep' }, target: 'sleeping' },
        { guard: { type: 'planIs', params: 'fire' }, target: 'claiming' },
        { guard: { type: 'planIs', params: 'skip' }, target: 'skipping' },
        { target: 'exhausted' },
      ],
    },
    sleeping: {
      after: { untilDue: 'checking' },
    },
    claiming: {
      invoke: { src: 'claimSlot', input: ({ context }) => ({ slot: currentSlot(context) }) },
      on: {
        claimed: [{ guard: 'mayCoalesce', target: 'probing' }, { target: 'firing' }],
        // Handled by another hall: planned past, never fired here.
        taken: { target: 'checking', actions: 'advance' },
        // The cluster cannot say: not fired here (at most once), as a failed fire.
        failed: { target: 'checking', actions: 'advance' },
      },
    },
    probing: {
      invoke: { src: 'probe', input: ({ context }) => ({ binding: cronBinding(context.id) }) },
      on: {
        probed: [{ guard: 'coalesces', target: 'coalescing' }, { target: 'firing' }],
      },
    },
    firing: {
      invoke: {
        src: 'fire',
        input: ({ context }) => ({ slot: currentSlot(context), late: context.plan?.kind === 'fire' && context.plan.late }),
      },
      on: {
        fired: [
          {
            guard: ({ event }) => HANDED_OVER.has(event.outcome.result),
            target: 'checking',
            actions: ['reportFired', 'advance'],
          },
          { target: 'checking', actions: 'advance' },
        ],
        failed: { target: 'checking', actions: 'advance' },
      },
    },
    coalescing: {
      invoke: { src: 'record', input: ({ context }) => ({ slot: currentSlot(context), result: 'coalesced' as const }) },
      on: {
        recorded: { target: 'checking', actions: ['reportCoalesced', 'advance'] },
        failed: { target: 'checking', actions: ['reportCoalesced', 'advance'] },
      },
    },
    skipping: {
      invoke: { src: 'record', input: ({ context }) => ({ slot: currentSlot(context), result: 'skipped' as const }) },
      on: {
        recorded: { target: 'checking', actions: 'advance' },
        failed: { target: 'checking', actions: 'advance' },
      },
    },
    /** The expression names no further time; nothing left to do. */
    exhausted: {},
  },
});

/** When the job fires next, as far as its state tells (for `status`). */
export function nextFireAt(context: CronJobContext, state: string): number | null {
  const plan = context.plan;
  if (state === 'exhausted' || plan === null) return null;
  if (plan.kind === 'sleep') return plan.until;
  if (plan.kind === 'fire') return plan.slot;
  return null;
}
