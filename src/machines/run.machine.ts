/**
 * The life of one mission's run, from admission to its reported end:
 *
 *   queued → alive.spawning → alive.running
 *          → alive.cancelling (SIGINT sent) → alive.terminating (SIGTERM)
 *          → alive.killing (SIGKILL) → reaping → done
 *
 * and `refused` when the hall refuses the raider entry. Before its raider
 * starts, a run hands its ledger record to the hall (`run.prepared`), which
 * emits it as a store operation like every other durable write; the run's
 * process waits until the store holds that record and has written it before
 * it asks for the raider, so a crash of the hall never runs the mission again
 * and never forgets the run. (The wait is the process actor's, not a state of
 * its own, and the hall sends nothing back: the record reaches the hall in
 * the same step, before the process actor starts, and is almost always
 * written by then. A go-ahead from the hall would cost the hall's and the
 * run's machines a step more on the path of every start.)
 *
 * Timers are XState delays, so tests drive escalation with a simulated
 * clock. The run never touches the OS itself: it invokes three named actors
 * (prepareRun, raiderProcess, reapRun; settleWorktree for a worktree run
 * whose raider never started) that the daemon provides.
 */
import { assign, enqueueActions, fromCallback, fromPromise, sendParent, setup } from 'xstate';
import type { Mission } from '../domain/mission.js';
import type { ProcessExit, RunOutcome } from '../domain/outcome.js';
import { unstartedOutcome } from '../domain/outcome.js';
import type { RefusalReason } from '../domain/refusal.js';
import type { RunWorktree } from '../domain/worktree.js';
import { errorMessage } from '../domain/error-message.js';
import type { LedgerRun } from './hall-effects.js';
import { definedFields } from '../domain/defined-fields.js';

export type RunSignal = 'SIGINT' | 'SIGTERM' | 'SIGKILL';

export interface RunInput {
  runId: string;
  slot: string;
  baseName: string;
  entry: Mission;
  /** The binding this run continues (explicit or the numbered slot's). */
  binding?: string;
  /** The binding's session when the run was admitted; none = the run creates one. */
  session?: string;
  /** True when no other run of the slot writes its log, so the log may be rotated. */
  rotateLog: boolean;
  /** cancel_grace in milliseconds; 0 never escalates. */
  graceMs: number;
  /** True when the mission waited in a queue (reported on refusal). */
  queued: boolean;
  /** The spawn request to answer once the run has a pid. */
  reqId?: string;
  /** A run of a previous hall whose process still lives: watch it instead of starting one. */
  adopted?: { pid: number; startedAt: number; eventsPath: string; logPath: string; worktree?: RunWorktree };
}

/** What preparing a run decided and created. */
export type PrepareOutput =
  | {
      kind: 'ready';
      eventsPath: string;
      logPath: string;
      /** The session the run continues, if bound. */
      session?: string;
      /** True when the session was created for this run. */
      sessionCreated?: boolean;
      /** Why the binding's session could not be had (the run then starts unbound). */
      sessionError?: string;
      startedAt: number;
      spawn: SpawnSpec;
      /** The run's own git worktree, when its raider has one. */
      worktree?: RunWorktree;
    }
  | { kind: 'refused'; reason: RefusalReason; error: string; at: number };

export interface SpawnSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /**
   * A warm ACP bridge the run took (docs/agents.md, "Warm bridges"): the run
   * is handed to it, with the bridge's arguments `args` (those after
   * `acp-client`), rather than started; the rest of the spec is the start of
   * a bridge of its own, should the spare be gone by then.
   */
  spare?: { id: string; pid: number; args: string[] };
}

export interface ProcessInput {
  runId: string;
  spawn?: SpawnSpec;
  eventsPath: string;
  logPath: string;
  adoptedPid?: number;
}

export interface ReapInput {
  runId: string;
  slot: string;
  eventsPath: string;
  logPath: string;
  exit: ProcessExit | null;
  binding?: string;
  session?: string;
  adopted: boolean;
  /** What the hall sent the process, so its outcome can say that the hall escalated. */
  stop: { cancelRequested: boolean; signals: RunSignal[] };
  /** The run's git worktree, settled once its outcome is known. */
  worktree?: RunWorktree;
}

/** A run that ends without a reap (its raider never started): its outcome, with its worktree settled. */
export interface SettleInput {
  outcome: RunOutcome;
  worktree?: RunWorktree;
}

/** Commands the run sends to its process actor. */
export type ProcessCommand = { type: 'signal'; signal: RunSignal };

export type RunEvent =
  | { type: 'run.cancel' }
  | { type: 'run.kill' }
  /** The hall is stopping: SIGTERM, and the hall's own shutdown timer (not cancel_grace) decides on SIGKILL. */
  | { type: 'run.terminate' }
  | { type: 'run.forceKill' }
  | { type: 'proc.spawned'; pid: number; at: number }
  | { type: 'proc.exited'; exit: ProcessExit | null; at: number }
  | { type: 'proc.failed'; error: string; at: number };

/** A run is ready to start: its record, for the hall to store before the raider exists. */
export interface RunPreparedReport {
  type: 'run.prepared';
  run: LedgerRun;
}

/** What a run tells the hall (through its host) while it lives. */
export interface RunSpawnedReport {
  type: 'run.spawned';
  runId: string;
  slot: string;
  baseName: string;
  pid: number;
  entry: Mission;
  /** The binding the run belongs to (also when it runs unbound after a session error). */
  binding?: string;
  /** The session it continues; absent when it runs unbound. */
  session?: string;
  sessionCreated: boolean;
  sessionError?: string;
  eventsPath: string;
  logPath: string;
  startedAt: number;
  reqId?: string;
  adopted: boolean;
}

export type RunOutput =
  | {
      kind: 'done';
      runId: string;
      slot: string;
      baseName: string;
      entry: Mission;
      pid: number;
      binding?: string;
      session?: string;
      outcome: RunOutcome;
      /** True when a cancel was asked for: ACP answers `cancelled` whatever the status. */
      cancelRequested: boolean;
      /** True when the process never started; the reply to its spawn is an error. */
      unstarted: boolean;
      endedAt: number;
      reqId?: string;
    }
  | {
      kind: 'refused';
      runId: string;
      slot: string;
      baseName: string;
      entry: Mission;
      binding?: string;
      reason: RefusalReason;
      error: string;
      queued: boolean;
      endedAt: number;
      reqId?: string;
    };

type PendingSignal = 'cancel' | 'kill' | 'terminate' | null;

export interface RunContext extends RunInput {
  pid: number;
  session?: string;
  sessionCreated: boolean;
  sessionError?: string;
  eventsPath: string;
  logPath: string;
  startedAt: number;
  spawn?: SpawnSpec;
  worktree?: RunWorktree;
  exit: ProcessExit | null;
  outcome?: RunOutcome;
  refusal?: { reason: RefusalReason; error: string };
  /** A stop asked for before the process existed; applied once it does. */
  pending: PendingSignal;
  cancelRequested: boolean;
  unstarted: boolean;
  /** Signals sent, in order: what the run did, for inspection and tests. */
  signals: RunSignal[];
  /** False once the hall's shutdown took over: then cancel_grace no longer escalates. */
  escalate: boolean;
  endedAt: number;
}

const notProvided = (name: string) => () => {
  throw new Error(`${name} is not provided: the daemon binds it with machine.provide()`);
};

/** The run's entry in the ledger, as the state store keeps it until its end is reported. */
function ledgerRunOf(context: RunContext): LedgerRun {
  return {
    id: context.runId,
    slot: context.slot,
    base_name: context.baseName,
    entry: context.entry,
    ...(context.binding !== undefined && context.session !== undefined ? { binding: context.binding, session: context.session } : {}),
    started_at: context.startedAt,
    events_path: context.eventsPath,
    log_path: context.logPath,
    ...definedFields({ worktree: context.worktree }),
    // A run handed to a warm bridge: a restarted hall finds that process by the spare's id, not the run's.
    ...(context.spawn?.spare !== undefined ? { pid: context.spawn.spare.pid, spare: context.spawn.spare.id } : {}),
  };
}

/** A stop asked for before the raider exists is kept and applied once it does (see alive.spawning). */
const PENDING_STOPS = {
  'run.cancel': { actions: 'holdCancel' },
  'run.kill': { actions: 'holdKill' },
  'run.terminate': { actions: 'holdTerminate' },
  'run.forceKill': { actions: 'holdKill' },
} as const;

export const runMachine = setup({
  types: {} as {
    context: RunContext;
    input: RunInput;
    events: RunEvent;
    output: RunOutput;
  },
  actors: {
    prepareRun: fromPromise<PrepareOutput, RunInput>(notProvided('prepareRun')),
    raiderProcess: fromCallback<ProcessCommand, ProcessInput>(notProvided('raiderProcess')),
    reapRun: fromPromise<RunOutcome, ReapInput>(notProvided('reapRun')),
    settleWorktree: fromPromise<RunOutcome, SettleInput>(notProvided('settleWorktree')),
  },
  delays: {
    cancelGrace: ({ context }) => context.graceMs,
  },
  guards: {
    escalates: ({ context }) => context.graceMs > 0 && context.escalate,
    isAdopted: ({ context }) => context.adopted !== undefined,
    pendingCancel: ({ context }) => context.pending === 'cancel',
    pendingStop: ({ context }) => context.pending === 'kill' || context.pending === 'terminate',
    hasWorktree: ({ context }) => context.worktree !== undefined,
    isRefusal: (_, params: { output: PrepareOutput }) => params.output.kind === 'refused',
  },
  actions: {
    /** Tells the process actor to signal, and keeps the signal in the run's record. */
    signal: enqueueActions(({ context, enqueue }, params: { signal: RunSignal }) => {
      enqueue.sendTo('process', { type: 'signal', signal: params.signal });
      enqueue.assign({ signals: [...context.signals, params.signal] });
    }),
    shutdownTakesOver: assign({ escalate: false }),
    /** The raider never started: the run ends with an outcome that says why. */
    notStarted: assign(({ context }, params: { error: string }) => ({
      unstarted: true,
      outcome: unstartedOutcome(context.runId, params.error),
    })),
    holdCancel: assign({ pending: 'cancel', cancelRequested: true }),
    holdKill: assign({ pending: 'kill' }),
    holdTerminate: assign({ pending: 'terminate' }),
    reportPrepared: sendParent(({ context }): RunPreparedReport => ({ type: 'run.prepared', run: ledgerRunOf(context) })),
    reportSpawned: sendParent(
      ({ context }): RunSpawnedReport => ({
        type: 'run.spawned',
        runId: context.runId,
        slot: context.slot,
        baseName: context.baseName,
        pid: context.pid,
        entry: context.entry,
        ...definedFields({ binding: context.binding, session: context.session }),
        sessionCreated: context.sessionCreated,
        ...definedFields({ sessionError: context.sessionError }),
        eventsPath: context.eventsPath,
        logPath: context.logPath,
        startedAt: context.startedAt,
        ...definedFields({ reqId: context.reqId }),
        adopted: context.adopted !== undefined,
      }),
    ),
  },
}).createMachine({
  id: 'run',
  // Object.assign, not a literal that spreads the input: on Node 20 the twelve fields a literal
  // adds after a spread take V8's slow path, ~20 us a run against ~1.6 us.
  context: ({ input }): RunContext =>
    Object.assign({}, input, {
      pid: input.adopted?.pid ?? 0,
      sessionCreated: false,
      eventsPath: input.adopted?.eventsPath ?? '',
      logPath: input.adopted?.logPath ?? '',
      startedAt: input.adopted?.startedAt ?? 0,
      worktree: input.adopted?.worktree,
      exit: null,
      pending: null,
      cancelRequested: false,
      unstarted: false,
      signals: [],
      escalate: true,
      endedAt: 0,
    }),
  initial: 'admitted',
  states: {
    admitted: {
      always: [{ guard: 'isAdopted', target: 'alive.running', actions: 'reportSpawned' }, { target: 'queued' }],
    },
    queued: {
      invoke: {
        src: 'prepareRun',
        input: ({ context }) => ({
          runId: context.runId,
          slot: context.slot,
          baseName: context.baseName,
          entry: context.entry,
          ...definedFields({ binding: context.binding, session: context.session }),
          rotateLog: context.rotateLog,
          graceMs: context.graceMs,
          queued: context.queued,
        }),
        onDone: [
          {
            guard: { type: 'isRefusal', params: ({ event }) => ({ output: event.output }) },
            target: 'refused',
            actions: assign(({ event }) =>
              event.output.kind === 'refused'
                ? { refusal: { reason: event.output.reason, error: event.output.error }, endedAt: event.output.at }
                : {},
            ),
          },
          {
            // The record goes to the hall before the process actor starts (both deferred, in this order).
            target: 'alive',
            actions: [
              assign(({ event }) => {
                const out = event.output;
                if (out.kind !== 'ready') return {};
                return {
                  eventsPath: out.eventsPath,
                  logPath: out.logPath,
                  startedAt: out.startedAt,
                  spawn: out.spawn,
                  session: out.session,
                  sessionCreated: out.sessionCreated === true,
                  ...definedFields({ sessionError: out.sessionError, worktree: out.worktree }),
                };
              }),
              'reportPrepared',
            ],
          },
        ],
        onError: { target: 'done', actions: { type: 'notStarted', params: ({ event }) => ({ error: errorMessage(event.error) }) } },
      },
      on: PENDING_STOPS,
    },
    alive: {
      invoke: {
        id: 'process',
        src: 'raiderProcess',
        input: ({ context }) => ({
          runId: context.runId,
          ...definedFields({ spawn: context.spawn }),
          eventsPath: context.eventsPath,
          logPath: context.logPath,
          ...(context.adopted !== undefined ? { adoptedPid: context.adopted.pid } : {}),
        }),
      },
      on: {
        'proc.exited': {
          target: 'reaping',
          actions: assign({ exit: ({ event }) => event.exit, endedAt: ({ event }) => event.at }),
        },
      },
      initial: 'spawning',
      states: {
        spawning: {
          on: {
            'proc.spawned': [
              {
                guard: 'pendingCancel',
                target: 'cancelling',
                actions: [assign({ pid: ({ event }) => event.pid }), 'reportSpawned'],
              },
              {
                guard: 'pendingStop',
                target: 'terminating',
                actions: [
                  assign({ pid: ({ event }) => event.pid, escalate: ({ context }) => context.pending !== 'terminate' }),
                  'reportSpawned',
                ],
              },
              { target: 'running', actions: [assign({ pid: ({ event }) => event.pid }), 'reportSpawned'] },
            ],
            // A run whose raider never started still has its worktree settled, as any ended run's.
            'proc.failed': [
              {
                guard: 'hasWorktree',
                target: '#run.unwinding',
                actions: [
                  assign({ endedAt: ({ event }) => event.at }),
                  { type: 'notStarted', params: ({ event }) => ({ error: event.error }) },
                ],
              },
              {
                target: '#run.done',
                actions: [
                  assign({ endedAt: ({ event }) => event.at }),
                  { type: 'notStarted', params: ({ event }) => ({ error: event.error }) },
                ],
              },
            ],
            ...PENDING_STOPS,
          },
        },
        running: {
          on: {
            'run.cancel': { target: 'cancelling', actions: assign({ cancelRequested: true }) },
            'run.kill': 'terminating',
            'run.terminate': { target: 'terminating', actions: 'shutdownTakesOver' },
            'run.forceKill': 'killing',
          },
        },
        cancelling: {
          entry: { type: 'signal', params: { signal: 'SIGINT' } },
          after: { cancelGrace: { guard: 'escalates', target: 'terminating' } },
          on: {
            'run.kill': 'terminating',
            'run.terminate': { target: 'terminating', actions: 'shutdownTakesOver' },
            'run.forceKill': 'killing',
          },
        },
        terminating: {
          entry: { type: 'signal', params: { signal: 'SIGTERM' } },
          after: { cancelGrace: { guard: 'escalates', target: 'killing' } },
          on: {
            // Asking again for a stop that is under way means: now.
            'run.kill': 'killing',
            'run.forceKill': 'killing',
            'run.terminate': { actions: 'shutdownTakesOver' },
          },
        },
        killing: {
          entry: { type: 'signal', params: { signal: 'SIGKILL' } },
        },
      },
    },
    reaping: {
      invoke: {
        src: 'reapRun',
        input: ({ context }) => ({
          runId: context.runId,
          slot: context.slot,
          eventsPath: context.eventsPath,
          logPath: context.logPath,
          exit: context.exit,
          ...(context.binding !== undefined && context.session !== undefined ? { binding: context.binding, session: context.session } : {}),
          adopted: context.adopted !== undefined,
          stop: { cancelRequested: context.cancelRequested, signals: context.signals },
          ...definedFields({ worktree: context.worktree }),
        }),
        onDone: { target: 'done', actions: assign({ outcome: ({ event }) => event.output }) },
        onError: {
          target: 'done',
          actions: assign(({ context, event }) => ({
            outcome: {
              status: 'failed',
              exit_code: context.exit?.code ?? 0,
              signaled: context.exit?.signal ? 1 : 0,
              error: `raider ${context.runId}: its result could not be read: ${errorMessage(event.error)}`,
            } satisfies RunOutcome,
          })),
        },
      },
    },
    unwinding: {
      invoke: {
        src: 'settleWorktree',
        input: ({ context }) => ({
          outcome: context.outcome ?? unstartedOutcome(context.runId, 'unknown'),
          ...definedFields({ worktree: context.worktree }),
        }),
        onDone: { target: 'done', actions: assign({ outcome: ({ event }) => event.output }) },
        onError: 'done',
      },
    },
    done: { type: 'final' },
    refused: { type: 'final' },
  },
  output: ({ context }): RunOutput => {
    const common = {
      runId: context.runId,
      slot: context.slot,
      baseName: context.baseName,
      entry: context.entry,
      endedAt: context.endedAt,
      ...definedFields({ reqId: context.reqId }),
    };
    if (context.refusal) {
      return {
        kind: 'refused',
        ...common,
        ...definedFields({ binding: context.binding }),
        reason: context.refusal.reason,
        error: context.refusal.error,
        queued: context.queued,
      };
    }
    return {
      kind: 'done',
      ...common,
      pid: context.pid,
      ...(context.binding !== undefined && context.session !== undefined ? { binding: context.binding, session: context.session } : {}),
      outcome: context.outcome ?? unstartedOutcome(context.runId, 'unknown'),
      cancelRequested: context.cancelRequested,
      unstarted: context.unstarted,
    };
  },
});
