/**
 * One warm ACP bridge of the pool (docs/agents.md, "Warm bridges"), from its
 * start to its end, and the replacement its take is owed:
 *
 *   starting ──ready──▶ ready ──take──▶ reserved ──handed──▶ handed ──exited──▶ handedGone ──▶ gone
 *      │ close            │ idle, close    │ 60 s, release, close    (said: its run ends now)
 *      └──────────────────┴───────────────┴──▶ ending ──exited──▶ gone
 *
 * A take owes the entry one replacement (`fill`): 2 s after it, or once the
 * run's end is told, whichever comes first; none when the bridge ends
 * unhanded (that end starts one) nor once the hall stops. A handed bridge
 * gone lives on (handedGone) until that replacement is started. An unhanded
 * bridge's end says how to replace it (`ended`): at once when the hall ended
 * it, when a run took it or when it lived long after it got ready; after a
 * wait (a failed start) when it never got ready or ended by itself soon
 * after it did. Nothing here touches a process: the
 * pool (src/actors/warm-bridges.ts) carries every emitted effect out.
 */
import { assign, emit, enqueueActions, not, raise, setup } from 'xstate';
import { EARLY_END_MS } from '../domain/warm-retry.js';

/** A taken spare not handed a run within this long is ended (its run was stopped before it started). */
export const RESERVED_MS = 60_000;
/**
 * How long after a take the replacement starts, unless the run ends sooner: once its agent has had time
 * to start, not while it starts (a bridge loading beside it on a small machine slows that start: bench/RESULTS.md, "Warm bridges").
 */
export const REFILL_AFTER_MS = 2000;

export interface WarmSpareInput {
  /** How long it waits ready and unused before the hall ends it (`warm_idle`). */
  idleMs: number;
}

export type WarmSpareEvent =
  /** Its pid (and stdin socket) is known: what ends it can reach it now. */
  | { type: 'spawned' }
  /** It said it is loaded. */
  | { type: 'ready' }
  | { type: 'take' }
  /** A taken spare whose run will not start. */
  | { type: 'release' }
  /** Its run was written to it. */
  | { type: 'handed' }
  /** Handed, it said it exits with `code`. */
  | { type: 'said'; code: number }
  /** Its process exited (the pool keeps how, for its run and its log). */
  | { type: 'exited' }
  /** Its run's end has been told. */
  | { type: 'runEnded' }
  /** The hall stops. */
  | { type: 'close' }
  /** Its own, REFILL_AFTER_MS after the take. */
  | { type: 'refill' };

/**
 * How an unhanded spare ended, which says how it is replaced: at once when the hall ended it (`byHall`) or it
 * ended by itself fine (`replace`: taken, or ready EARLY_END_MS or longer); after a wait when that end is a
 * failed start (`failedStart`: never ready; `earlyEnd`: ready for less than EARLY_END_MS).
 */
export type SpareEnd = 'byHall' | 'replace' | 'failedStart' | 'earlyEnd';

export type WarmSpareEffect =
  /** End its stdin and SIGTERM its group, as far as they are known yet. */
  | { type: 'tellToEnd' }
  /** It got ready: the entry's failed starts in a row are its to carry until it proves itself. */
  | { type: 'readied' }
  /** The handed run ends with this code: kill what is left of the group first. */
  | { type: 'exitSaid'; code: number }
  /** The handed bridge exited without saying its code: that is its run's end. */
  | { type: 'runExit' }
  | { type: 'ended'; how: SpareEnd }
  /** Start the take's replacement. */
  | { type: 'fill' };

export const warmSpareMachine = setup({
  types: {} as {
    context: WarmSpareInput & { refillDue: boolean };
    input: WarmSpareInput;
    events: WarmSpareEvent;
    emitted: WarmSpareEffect;
    tags: 'unused';
  },
  delays: {
    idle: ({ context }) => context.idleMs,
    reserved: RESERVED_MS,
    refill: REFILL_AFTER_MS,
    earlyEnd: EARLY_END_MS,
  },
  actions: {
    forgetRefill: enqueueActions(({ enqueue }) => {
      enqueue.assign({ refillDue: false });
      enqueue.cancel('refill');
    }),
  },
  guards: {
    refillDue: ({ context }) => context.refillDue,
  },
}).createMachine({
  id: 'warmSpare',
  context: ({ input }) => ({ ...input, refillDue: false }),
  initial: 'starting',
  // Forgetting the owed refill cancels its delayed event; the final state cancels every delay.
  on: {
    refill: { actions: ['forgetRefill', emit({ type: 'fill' })] },
    runEnded: { guard: 'refillDue', actions: ['forgetRefill', emit({ type: 'fill' })] },
    close: { actions: 'forgetRefill' },
  },
  states: {
    // Starting or ready: a spare its entry keeps (the pool counts these against `keep_warm`).
    starting: {
      tags: ['unused'],
      on: {
        ready: 'ready',
        close: 'ending',
        exited: { target: 'gone', actions: emit({ type: 'ended', how: 'failedStart' }) },
      },
    },
    ready: {
      tags: ['unused'],
      entry: emit({ type: 'readied' }),
      initial: 'fresh',
      states: {
        fresh: {
          after: { earlyEnd: 'proven' },
          on: { exited: { target: '#warmSpare.gone', actions: emit({ type: 'ended', how: 'earlyEnd' }) } },
        },
        proven: {},
      },
      after: { idle: 'ending' },
      on: {
        take: {
          target: 'reserved',
          actions: [assign({ refillDue: true }), raise({ type: 'refill' }, { id: 'refill', delay: 'refill' })],
        },
        close: 'ending',
        exited: { target: 'gone', actions: emit({ type: 'ended', how: 'replace' }) },
      },
    },
    reserved: {
      after: { reserved: 'ending' },
      on: {
        handed: 'handed',
        release: 'ending',
        close: { target: 'ending', actions: 'forgetRefill' },
        exited: { target: 'gone', actions: emit({ type: 'ended', how: 'replace' }) },
      },
    },
    handed: {
      initial: 'running',
      states: {
        running: {
          on: {
            said: { target: 'told', actions: emit(({ event }) => ({ type: 'exitSaid', code: event.code })) },
            exited: {
              target: '#warmSpare.handedGone',
              actions: emit({ type: 'runExit' }),
            },
          },
        },
        told: { on: { exited: '#warmSpare.handedGone' } },
      },
    },
    /** Its run is over; it is gone once its take's replacement has started (or never will). */
    handedGone: {
      always: { guard: not('refillDue'), target: 'gone' },
    },
    ending: {
      entry: emit({ type: 'tellToEnd' }),
      on: {
        // Ended before its pid was known: told now.
        spawned: { actions: emit({ type: 'tellToEnd' }) },
        exited: { target: 'gone', actions: emit({ type: 'ended', how: 'byHall' }) },
      },
    },
    gone: { type: 'final' },
  },
});
