/**
 * A slot: where the runs of one raider name live.
 *
 * A plain name runs every mission at once. A numbered name (`1bjorn`) runs
 * one mission at a time; the rest wait in its FIFO queue, and a new mission
 * never overtakes those already waiting. Before the head of the queue starts,
 * the slot offers it to the hall, which hands it the binding's session or
 * moves it to its busy binding's queue.
 */
import { assign, enqueueActions, sendParent, setup } from 'xstate';
import type { DoneActorEvent, SnapshotFrom } from 'xstate';
import { splitQueue, toFront, type Mission } from '../domain/mission.js';
import { MissionQueue } from '../domain/mission-queue.js';
import { effectiveBinding } from '../domain/names.js';
import { laterCursor, nextRunId, parseRunId, type RunIdCursor } from '../domain/run-id.js';
import { runMachine, type RunInput, type RunOutput } from './run.machine.js';
import { runHostLogic, type RunHostCommand } from './run-host.js';
import { definedFields } from '../domain/defined-fields.js';
import type { RunWorktree } from '../domain/worktree.js';

/** Why waiting missions leave a queue without a run: a cancel, or their binding went away. */
export type DropReason = 'cancelled' | 'binding_closed';

/** A run of a previous hall whose process still lives; the slot watches it to its end. */
export interface AdoptedRun {
  runId: string;
  entry: Mission;
  binding?: string;
  session?: string;
  pid: number;
  startedAt: number;
  eventsPath: string;
  logPath: string;
  /** The run's git worktree, settled when it ends. */
  worktree?: RunWorktree;
}

export interface SlotInput {
  slot: string;
  baseName: string;
  singleton: boolean;
  /** Missions left waiting by a previous hall, oldest first. */
  queue: Mission[];
  /** The last run id of this slot, so new ids never repeat one. */
  lastRunId?: RunIdCursor;
  graceMs: number;
}

export interface SlotContext extends Omit<SlotInput, 'queue'> {
  /** The waiting missions, oldest first: a value whose push and shift cost O(1) (mission-queue.ts). */
  queue: MissionQueue;
  /** Run ids of the live runs. */
  active: string[];
  /** Time of the latest event: new run ids are made from it. */
  now: number;
  stopping: boolean;
}

export type SlotEvent =
  /** `queued`: the mission had already waited (in its binding's queue). */
  | { type: 'slot.submit'; entry: Mission; at: number; reqId?: string; session?: string; queued?: boolean; runId?: string }
  /**
   * The hall read the slot busy (`waitingPlace`) and tells, in the same
   * step, that the mission waits: it joins the queue, with no report back.
   */
  | { type: 'slot.hold'; entry: Mission; at: number }
  | { type: 'slot.drain'; at: number }
  /** `runId`: the id a shared cluster reserved for the mission when this hall claimed it. */
  | { type: 'slot.offerAccepted'; missionId: string; at: number; session?: string; runId?: string }
  | { type: 'slot.offerDeclined'; missionId: string; at: number }
  | { type: 'slot.drop'; binding: string }
  /** Drops one waiting mission (a cancel by its id). */
  | { type: 'slot.dropMission'; missionId: string; reason: DropReason }
  /** Moves one waiting mission to the head of the queue (an operator's `queue_front`). */
  | { type: 'slot.frontMission'; missionId: string; reqId?: string }
  | { type: 'slot.stop' }
  | { type: 'slot.forceKill' }
  | ({ type: 'slot.adopt' } & AdoptedRun)
  | DoneActorEvent<RunOutput>;

/** What a slot tells the hall. */
export type SlotReport =
  /** Only for a run with an explicit binding or a reserved run id (see `startRun`). */
  | { type: 'slot.runCreated'; slot: string; runId: string; entry: Mission; binding?: string; reqId?: string }
  | { type: 'slot.queued'; slot: string; entry: Mission; depth: number; reqId?: string }
  | { type: 'slot.offer'; slot: string; entry: Mission; at: number }
  | { type: 'slot.runEnded'; slot: string; output: RunOutput }
  | { type: 'slot.dropped'; slot: string; entries: Mission[]; reason: DropReason }
  /** `from`: the mission's place before the move (1 first); absent when it no longer waited. */
  | { type: 'slot.moved'; slot: string; missionId: string; entry?: Mission; from?: number; reqId?: string };

/** The event of one type: what an action with typed params is given. */
type EventOf<T extends SlotEvent['type']> = Extract<SlotEvent, { type: T }>;

interface StartRequest {
  entry: Mission;
  at: number;
  /** An id reserved for the run elsewhere (a shared cluster); else the slot makes the next one. */
  runId?: string;
  session?: string;
  reqId?: string;
  queued: boolean;
}

/** The mission at the head of the queue; offered and started only while there is one (the guards say so). */
function headOf(context: SlotContext): Mission {
  const head = context.queue.head;
  if (head === undefined) throw new Error(`slot ${context.slot}: no waiting mission to offer`);
  return head;
}

/** The waiting mission with this id; the guards check that it waits. */
function waitingEntry(context: SlotContext, missionId: string): Mission {
  const entry = context.queue.find(missionId);
  if (entry === undefined) throw new Error(`slot ${context.slot}: mission ${missionId} does not wait here`);
  return entry;
}

/** A mission submitted to the slot, as a run to start now. */
function submitted({ event }: { event: Extract<SlotEvent, { type: 'slot.submit' }> }): StartRequest {
  return {
    entry: event.entry,
    at: event.at,
    ...definedFields({ session: event.session, reqId: event.reqId, runId: event.runId }),
    queued: event.queued === true,
  };
}

export const slotMachine = setup({
  types: {} as { context: SlotContext; input: SlotInput; events: SlotEvent },
  actors: { runHost: runHostLogic(runMachine) },
  guards: {
    singleton: ({ context }) => context.singleton,
    holdsNoMore: ({ context }) => context.stopping || context.queue.length === 0,
    // The offered mission may no longer be the head (an operator moved another to the front meanwhile): found by its id.
    isOfferedHead: ({ context, event }) =>
      (event.type === 'slot.offerAccepted' || event.type === 'slot.offerDeclined') && context.queue.indexOf(event.missionId) >= 0,
    idleAfterRunEnds: ({ context, event }) =>
      'actorId' in event && context.active.length === 1 && context.active[0] === runIdOf(event.actorId),
  },
  actions: {
    startRun: enqueueActions(({ context, enqueue }, req: StartRequest) => {
      const { id, cursor } = startId(context, req);
      const binding = effectiveBinding(context.slot, req.entry.binding);
      enqueue.assign({ lastRunId: cursor, active: [...context.active, id], now: req.at });
      const input: RunInput = {
        runId: id,
        slot: context.slot,
        baseName: context.baseName,
        entry: req.entry,
        ...definedFields({ binding, session: req.session }),
        rotateLog: context.active.length === 0,
        graceMs: context.graceMs,
        queued: req.queued,
        ...definedFields({ reqId: req.reqId }),
      };
      enqueue.sendTo('runs', { type: 'runs.start', input } satisfies RunHostCommand);
      // The hall hears of a new run only when it has to act on it: it tells an explicit binding's
      // queue, and forgets a reserved id. Any other start would cost it a step on the path of the
      // start for nothing (it counts live runs from the slots' `active`: hall-children.ts).
      if (req.entry.binding === undefined && req.runId === undefined) return;
      enqueue.sendParent({
        type: 'slot.runCreated',
        slot: context.slot,
        runId: id,
        entry: req.entry,
        ...definedFields({ binding, reqId: req.reqId }),
      } satisfies SlotReport);
    }),
    enqueue: enqueueActions(({ context, enqueue }, event: EventOf<'slot.submit'>) => {
      const queue = context.queue.push(event.entry);
      enqueue.assign({ queue, now: event.at });
      enqueue.sendParent({
        type: 'slot.queued',
        slot: context.slot,
        entry: event.entry,
        depth: queue.length,
        ...definedFields({ reqId: event.reqId }),
      } satisfies SlotReport);
    }),
    hold: assign(({ context }, event: EventOf<'slot.hold'>) => ({ queue: context.queue.push(event.entry), now: event.at })),
    offerHead: sendParent(
      ({ context }): SlotReport => ({
        type: 'slot.offer',
        slot: context.slot,
        entry: headOf(context),
        at: context.now,
      }),
    ),
    endRun: enqueueActions(({ context, enqueue }, event: DoneActorEvent<RunOutput>) => {
      const runId = runIdOf(event.actorId);
      enqueue.assign({
        active: context.active.filter((id) => id !== runId),
        now: Math.max(context.now, event.output.endedAt),
      });
      enqueue.sendParent({ type: 'slot.runEnded', slot: context.slot, output: event.output } satisfies SlotReport);
    }),
    dropBinding: enqueueActions(({ context, enqueue }, event: EventOf<'slot.drop'>) => {
      const { kept, left: dropped } = splitQueue(context.queue, (m) => m.binding === event.binding);
      if (dropped.length === 0) return;
      enqueue.assign({ queue: MissionQueue.of(kept) });
      enqueue.sendParent({ type: 'slot.dropped', slot: context.slot, entries: dropped, reason: 'binding_closed' } satisfies SlotReport);
    }),
    frontMission: enqueueActions(({ context, enqueue }, event: EventOf<'slot.frontMission'>) => {
      const { queue, entry, from } = toFront(context.queue.toArray(), event.missionId);
      if (entry !== undefined) enqueue.assign({ queue: MissionQueue.of(queue) });
      enqueue.sendParent({
        type: 'slot.moved',
        slot: context.slot,
        missionId: event.missionId,
        ...(entry !== undefined ? { entry, from } : {}),
        ...definedFields({ reqId: event.reqId }),
      } satisfies SlotReport);
    }),
    dropMission: enqueueActions(({ context, enqueue }, event: EventOf<'slot.dropMission'>) => {
      const entry = context.queue.find(event.missionId);
      if (entry === undefined) return;
      enqueue.assign({ queue: context.queue.without(event.missionId) });
      enqueue.sendParent({ type: 'slot.dropped', slot: context.slot, entries: [entry], reason: event.reason } satisfies SlotReport);
    }),
    stopRuns: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ stopping: true });
      enqueue.sendTo('runs', { type: 'runs.send', runIds: context.active, event: { type: 'run.terminate' } } satisfies RunHostCommand);
    }),
    forceKillRuns: enqueueActions(({ context, enqueue }) => {
      enqueue.sendTo('runs', { type: 'runs.send', runIds: context.active, event: { type: 'run.forceKill' } } satisfies RunHostCommand);
    }),
    adoptRun: enqueueActions(({ context, enqueue }, event: EventOf<'slot.adopt'>) => {
      enqueue.assign({ active: [...context.active, event.runId] });
      const input: RunInput = {
        runId: event.runId,
        slot: context.slot,
        baseName: context.baseName,
        entry: event.entry,
        ...definedFields({ binding: event.binding, session: event.session }),
        rotateLog: false,
        graceMs: context.graceMs,
        queued: false,
        adopted: {
          pid: event.pid,
          startedAt: event.startedAt,
          eventsPath: event.eventsPath,
          logPath: event.logPath,
          ...definedFields({ worktree: event.worktree }),
        },
      };
      enqueue.sendTo('runs', { type: 'runs.start', input } satisfies RunHostCommand);
    }),
  },
}).createMachine({
  id: 'slot',
  context: ({ input }) => ({ ...input, queue: MissionQueue.of(input.queue), active: [], now: 0, stopping: false }),
  // The live runs: held by a host, not spawned as children (see run-host.ts).
  invoke: { id: 'runs', src: 'runHost' },
  initial: 'choosing',
  on: {
    'slot.stop': { actions: 'stopRuns' },
    'slot.forceKill': { actions: 'forceKillRuns' },
    'slot.drop': { actions: { type: 'dropBinding', params: ({ event }) => event } },
    'slot.dropMission': { actions: { type: 'dropMission', params: ({ event }) => event } },
    'slot.frontMission': { actions: { type: 'frontMission', params: ({ event }) => event } },
  },
  states: {
    choosing: {
      always: [{ guard: 'singleton', target: 'idle' }, { target: 'parallel' }],
    },
    parallel: {
      on: {
        'slot.submit': {
          guard: ({ context }) => !context.stopping,
          actions: {
            type: 'startRun',
            params: submitted,
          },
        },
        'slot.adopt': { actions: { type: 'adoptRun', params: ({ event }) => event } },
        'xstate.done.actor.*': { actions: { type: 'endRun', params: ({ event }) => event } },
      },
    },
    idle: {
      on: {
        'slot.submit': {
          target: 'busy',
          actions: {
            type: 'startRun',
            params: submitted,
          },
        },
        'slot.drain': { target: 'draining', actions: assign({ now: ({ event }) => event.at }) },
        // Only when events that came before it freed the slot (the hall read the slot busy): it waits its turn as if it had.
        'slot.hold': { target: 'draining', actions: { type: 'hold', params: ({ event }) => event } },
        'slot.adopt': { target: 'busy', actions: { type: 'adoptRun', params: ({ event }) => event } },
      },
    },
    busy: {
      on: {
        'slot.submit': { actions: { type: 'enqueue', params: ({ event }) => event } },
        'slot.hold': { actions: { type: 'hold', params: ({ event }) => event } },
        'xstate.done.actor.*': [
          { guard: 'idleAfterRunEnds', target: 'draining', actions: { type: 'endRun', params: ({ event }) => event } },
          { actions: { type: 'endRun', params: ({ event }) => event } },
        ],
      },
    },
    draining: {
      always: [
        { guard: 'holdsNoMore', target: 'idle' },
        { target: 'offering', actions: 'offerHead' },
      ],
    },
    offering: {
      on: {
        'slot.submit': { actions: { type: 'enqueue', params: ({ event }) => event } },
        'slot.hold': { actions: { type: 'hold', params: ({ event }) => event } },
        'slot.offerAccepted': [
          {
            guard: 'isOfferedHead',
            target: 'busy',
            actions: [
              {
                type: 'startRun',
                params: ({ context, event }) => ({
                  entry: waitingEntry(context, event.missionId),
                  at: event.at,
                  ...definedFields({ session: event.session, runId: event.runId }),
                  queued: true,
                }),
              },
              assign({ queue: ({ context, event }) => context.queue.without(event.missionId) }),
            ],
          },
          // The head was dropped meanwhile: offer the next one.
          { target: 'draining' },
        ],
        'slot.offerDeclined': [
          {
            guard: 'isOfferedHead',
            target: 'draining',
            actions: assign({
              queue: ({ context, event }) => context.queue.without(event.missionId),
              now: ({ event }) => event.at,
            }),
          },
          { target: 'draining' },
        ],
      },
    },
  },
});

/**
 * Where a new mission would wait in this slot (1: first), or undefined when
 * the slot would start it: a numbered slot that runs or offers a mission
 * queues every new one (its `busy` and `offering` states). The hall reads it
 * to answer a queued spawn in its own step: asking the slot and hearing
 * `slot.queued` back costs two machine steps more per queued spawn.
 */
export function waitingPlace(snapshot: SnapshotFrom<typeof slotMachine>): number | undefined {
  const state = snapshot.value;
  return state === 'busy' || state === 'offering' ? snapshot.context.queue.length + 1 : undefined;
}

/** The run's id: the one reserved for it, or the slot's next; the cursor never goes back. */
function startId(context: SlotContext, req: StartRequest): { id: string; cursor: RunIdCursor } {
  const reserved = req.runId !== undefined ? parseRunId(req.runId) : null;
  if (req.runId === undefined || reserved === null) return nextRunId(context.slot, req.at, context.lastRunId);
  return { id: req.runId, cursor: laterCursor(context.lastRunId, reserved.cursor) };
}

function runIdOf(actorId: string): string {
  return actorId.startsWith('run:') ? actorId.slice(4) : actorId;
}
