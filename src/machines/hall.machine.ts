/**
 * The hall root actor: owns the slots and binding queues, routes missions
 * between them, answers control commands, and keeps the session of each
 * binding. Lifecycle: booting → running → stopping → stopped.
 *
 * It decides; it never does I/O. What it decided leaves as emitted events
 * (see hall-effects.ts) that adapters carry out.
 */
import { assign, emit, setup, type ActorRefFrom } from 'xstate';
import type { Mission, TelegramTarget } from '../domain/mission.js';
import { effectiveBinding, slotBinding, slotOf } from '../domain/names.js';
import type { RunOutcome } from '../domain/outcome.js';
import type { RunIdCursor } from '../domain/run-id.js';
import { bindingQueueMachine, type BindingQueueReport } from './binding-queue.machine.js';
import type { HallBusEvent, RaiderDoneEvent } from '../protocol/events.js';
import type { HallEmitted, ReplyBody, StoreOp } from './hall-effects.js';
import type { RunOutput, RunSpawnedReport } from './run.machine.js';
import { runActorId } from './run-host.js';
import { type AdoptedRun, type DropReason, slotMachine, type SlotReport } from './slot.machine.js';
import { ownEntry as own } from '../domain/own-entry.js';

/** A run of a previous hall found already gone at start-up: reported, never run again. */
export interface EndedRun {
  runId: string;
  slot: string;
  pid: number;
  entry: Mission;
  binding?: string;
  session?: string;
  outcome: RunOutcome;
}

export interface HallInput {
  root: string;
  /** cancel_grace in milliseconds. */
  graceMs: number;
  /** How long raiders get to end after SIGTERM when the hall stops. */
  shutdownGraceMs: number;
  slotQueues: Record<string, Mission[]>;
  bindingQueues: Record<string, Mission[]>;
  sessions: Record<string, string>;
  runIdCursors: Record<string, RunIdCursor>;
  adopted: AdoptedRun[];
  ended: EndedRun[];
  /** How many runs may live at once (`max_running`); absent = no limit. */
  maxRunning?: number;
}

/**
 * A start that waits for room under `max_running`, in the order it came:
 * a new mission not yet routed, a binding's waiting mission passed on, or a
 * numbered slot's offer of its head.
 */
export type RoomWait =
  | { kind: 'submit'; entry: Mission; at: number }
  | { kind: 'pass'; binding: string; entry: Mission; at: number }
  | { kind: 'offer'; slot: string; entry: Mission; at: number };

export interface HallContext extends HallInput {
  slots: Record<string, ActorRefFrom<typeof slotMachine>>;
  bindings: Record<string, ActorRefFrom<typeof bindingQueueMachine>>;
  /**
   * How many runs live. A count, not a record of them: the runs are found by
   * their system id, and a record copied on every start and end costs O(n)
   * per run when a burst has a thousand of them at once.
   */
  liveRuns: number;
  /**
   * Room taken under `max_running`: one per live run and per mission let
   * through towards a start (routed to a slot or binding, or an accepted
   * offer). Given back when such a mission queues instead, or its run ends.
   */
  tickets: number;
  /** Starts waiting for room, oldest first. */
  roomQueue: RoomWait[];
  /** Runs whose end another hall of the cluster reported: their end here says nothing more. */
  silenced: Record<string, true>;
  /** Run ids the cluster reserved for claimed missions (by mission id), unique across its halls. */
  reservedRunIds: Record<string, string>;
}

export interface SpawnCommand {
  type: 'cmd.spawn';
  reqId?: string;
  missionId: string;
  /** Checked before it comes here (the gateway): a safe raider name. */
  name: string;
  mission: string;
  binding?: string;
  telegram?: TelegramTarget;
  permission_mode?: string;
  cwd?: string;
  at: number;
}

export type HallCommand =
  | SpawnCommand
  | { type: 'cmd.kill'; reqId: string; id: string }
  | { type: 'cmd.cancel'; reqId: string; id: string }
  | { type: 'cmd.sessionReset'; reqId?: string; binding: string }
  | { type: 'cmd.dropQueued'; reqId?: string; binding: string }
  /** Binds a binding to an existing session (ACP sessions are their raider session). */
  | { type: 'cmd.bindSession'; reqId?: string; binding: string; session: string }
  /** Forgets a binding; its journal stays. */
  | { type: 'cmd.unbindSession'; reqId?: string; binding: string };

export type HallEvent =
  | { type: 'hall.boot'; at: number }
  /**
   * A shared cluster's database gave this hall a mission to run (it claimed
   * it), with the session its binding continues there.
   */
  | { type: 'cluster.claimed'; entry: Mission; session?: string; runId: string; at: number }
  /** This hall was taken for lost and replaced: these runs of it were reported by another hall; stop them, silently. */
  | { type: 'cluster.replaced'; runIds: string[] }
  | { type: 'hall.stop' }
  | HallCommand
  | SlotReport
  | BindingQueueReport
  | RunSpawnedReport;

type SlotRef = ActorRefFrom<typeof slotMachine>;
type BindingRef = ActorRefFrom<typeof bindingQueueMachine>;

const bus = (event: HallBusEvent): HallEmitted => ({ type: 'bus', event });
const store = (op: StoreOp): HallEmitted => ({ type: 'store', op });
const reply = (reqId: string, body: ReplyBody): HallEmitted => ({ type: 'reply', reqId, body });

/** The `raider.done` event of a run (docs/protocol.md). */
export function doneEvent(run: EndedRun & { cancelRequested?: boolean }): RaiderDoneEvent {
  const o = run.outcome;
  return {
    type: 'raider.done',
    id: run.runId,
    slot: run.slot,
    pid: run.pid,
    exit_code: o.exit_code,
    signaled: o.signaled,
    status: o.status,
    ...(o.response !== undefined ? { response: o.response } : {}),
    ...(o.error !== undefined ? { error: o.error } : {}),
    ...(o.hall_stop !== undefined ? { hall_stop: o.hall_stop } : {}),
    ...(o.session !== undefined ? { session: o.session } : {}),
    ...(run.binding !== undefined && run.session !== undefined ? { binding: run.binding } : {}),
    mission_id: run.entry.id,
    ...(run.cancelRequested ? { cancel_requested: true } : {}),
  };
}

/** A waiting mission and the queue actor that holds it (or the hall's own wait for room). */
interface Waiting {
  entry: Mission;
  queue: { kind: 'slot'; ref: SlotRef } | { kind: 'binding'; ref: BindingRef } | { kind: 'room' };
}

/** Finds a waiting mission by its id in the slot and binding queues (the queues live in the children). */
function findWaiting(context: HallContext, missionId: string): Waiting | undefined {
  const forRoom = context.roomQueue.find((w) => w.kind !== 'offer' && w.entry.id === missionId);
  if (forRoom) return { entry: forRoom.entry, queue: { kind: 'room' } };
  for (const ref of Object.values(context.slots)) {
    const entry = ref.getSnapshot().context.queue.find((m) => m.id === missionId);
    if (entry) return { entry, queue: { kind: 'slot', ref } };
  }
  for (const ref of Object.values(context.bindings)) {
    const entry = ref.getSnapshot().context.queue.find((m) => m.id === missionId);
    if (entry) return { entry, queue: { kind: 'binding', ref } };
  }
  return undefined;
}

/** The explicit binding of a mission, which has a queue machine of its own. */
/** The slot actor that `ensureSlot` made just before: a missing one is a bug in the hall, not an event to drop. */
function slotRefOf(context: HallContext, slot: string): SlotRef {
  const ref = own(context.slots, slot);
  if (!ref) throw new Error(`the hall has no actor for slot ${slot}`);
  return ref;
}

/** The binding queue actor that `ensureBinding` made just before (see slotRefOf). */
function bindingRefOf(context: HallContext, binding: string): BindingRef {
  const ref = own(context.bindings, binding);
  if (!ref) throw new Error(`the hall has no actor for binding ${binding}`);
  return ref;
}

function explicitBinding(entry: Mission): string | undefined {
  return entry.binding;
}

/** The mission a slot would start next, read where an answer to its offer is decided. */
function slotHead(context: HallContext, slot: string): string | undefined {
  return own(context.slots, slot)?.getSnapshot().context.queue[0]?.id;
}

/** True when a new start must wait for room: none left, or others wait before it. */
function roomFull(context: HallContext): boolean {
  return context.maxRunning !== undefined && (context.tickets >= context.maxRunning || context.roomQueue.length > 0);
}

/** A mission from a spawn command. */
export function missionOf(event: Omit<SpawnCommand, 'type' | 'reqId'>): Mission {
  return {
    id: event.missionId,
    name: event.name,
    mission: event.mission,
    ...(event.binding !== undefined ? { binding: event.binding } : {}),
    ...(event.telegram !== undefined ? { telegram: event.telegram } : {}),
    ...(event.permission_mode !== undefined ? { permission_mode: event.permission_mode } : {}),
    ...(event.cwd !== undefined ? { cwd: event.cwd } : {}),
  };
}

const hallSetup = setup({
  types: {} as {
    context: HallContext;
    input: HallInput;
    events: HallEvent;
    emitted: HallEmitted;
  },
  actors: { slot: slotMachine, bindingQueue: bindingQueueMachine },
  delays: {
    shutdownGrace: ({ context }) => context.shutdownGraceMs,
    // After SIGKILL a process is gone at once; this only guards against a run that never reports.
    lastResort: ({ context }) => context.shutdownGraceMs + 5000,
  },
  guards: {
    noLiveRuns: ({ context }) => context.liveRuns === 0,
  },
  actions: {
    ensureSlot: assign(({ context, spawn }, params: { name: string }) => {
      const { slot, baseName, singleton } = slotOf(params.name);
      if (own(context.slots, slot)) return {};
      const cursor = own(context.runIdCursors, slot);
      const ref: SlotRef = spawn('slot', {
        id: `slot:${slot}`,
        systemId: `slot:${slot}`,
        input: {
          slot,
          baseName,
          singleton,
          queue: own(context.slotQueues, slot) ?? [],
          ...(cursor ? { lastRunId: cursor } : {}),
          graceMs: context.graceMs,
        },
      });
      return { slots: { ...context.slots, [slot]: ref } };
    }),
    ensureBinding: assign(({ context, spawn }, params: { binding: string }) => {
      if (own(context.bindings, params.binding)) return {};
      const ref: BindingRef = spawn('bindingQueue', {
        id: `binding:${params.binding}`,
        systemId: `binding:${params.binding}`,
        input: { binding: params.binding, queue: own(context.bindingQueues, params.binding) ?? [] },
      });
      return { bindings: { ...context.bindings, [params.binding]: ref } };
    }),
  },
});

/** What an action of the hall may enqueue: the helpers below add to the action that calls them. */
type HallEnqueue = Parameters<Parameters<typeof hallSetup.enqueueActions>[0]>[0]['enqueue'];

/** Sends a mission that has room on its way: to its binding's queue, or to its slot. */
function routeMission(enqueue: HallEnqueue, params: { entry: Mission; at: number; reqId?: string; queued?: boolean }): void {
  const { entry } = params;
  const reqId = params.reqId !== undefined ? { reqId: params.reqId } : {};
  const explicit = entry.binding;
  if (explicit !== undefined) {
    enqueue({ type: 'ensureBinding', params: { binding: explicit } });
    enqueue.sendTo(({ context: c }) => bindingRefOf(c, explicit), { type: 'binding.submit', entry, at: params.at, ...reqId });
    return;
  }
  const { slot } = slotOf(entry.name);
  const binding = effectiveBinding(slot, undefined);
  enqueue({ type: 'ensureSlot', params: { name: entry.name } });
  enqueue.sendTo(
    ({ context: c }) => slotRefOf(c, slot),
    ({ context: c }) => {
      const session = binding !== undefined ? own(c.sessions, binding) : undefined;
      const runId = own(c.reservedRunIds, entry.id);
      return {
        type: 'slot.submit' as const,
        entry,
        at: params.at,
        ...(session !== undefined ? { session } : {}),
        ...(runId !== undefined ? { runId } : {}),
        ...reqId,
        ...(params.queued ? { queued: true } : {}),
      };
    },
  );
}

/** Hands a binding's mission to its slot, in the binding's session. */
function passMission(
  context: HallContext,
  enqueue: HallEnqueue,
  params: { binding: string; entry: Mission; at: number; reqId?: string; waited: boolean },
): void {
  const { slot } = slotOf(params.entry.name);
  const session = own(context.sessions, params.binding);
  const runId = own(context.reservedRunIds, params.entry.id);
  enqueue({ type: 'ensureSlot', params: { name: params.entry.name } });
  enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), {
    type: 'slot.submit',
    entry: params.entry,
    at: params.at,
    ...(session !== undefined ? { session } : {}),
    ...(runId !== undefined ? { runId } : {}),
    ...(params.reqId !== undefined ? { reqId: params.reqId } : {}),
    ...(params.waited ? { queued: true } : {}),
  });
}

/** The head of a numbered slot may start (room taken): its binding decides if it is free. */
function acceptOffer(context: HallContext, enqueue: HallEnqueue, params: { slot: string; entry: Mission; at: number }): void {
  const slotRef = own(context.slots, params.slot);
  if (!slotRef) return;
  const explicit = explicitBinding(params.entry);
  if (explicit !== undefined) {
    enqueue({ type: 'ensureBinding', params: { binding: explicit } });
    enqueue.sendTo(({ context: c }) => bindingRefOf(c, explicit), {
      type: 'binding.offer',
      entry: params.entry,
      slot: params.slot,
      at: params.at,
    });
    return;
  }
  const session = own(context.sessions, slotBinding(params.slot));
  enqueue.sendTo(slotRef, {
    type: 'slot.offerAccepted',
    missionId: params.entry.id,
    at: params.at,
    ...(session !== undefined ? { session } : {}),
  });
}

/** Drops missions waiting for room (a cancel by id, a closed binding); a passed mission frees its binding. */
function dropFromRoom(
  context: HallContext,
  enqueue: HallEnqueue,
  params: { reason: DropReason; missionId?: string; binding?: string },
): void {
  const dropped = (w: RoomWait) =>
    w.kind !== 'offer' && (params.missionId !== undefined ? w.entry.id === params.missionId : w.entry.binding === params.binding);
  const left = context.roomQueue.filter(dropped);
  if (left.length === 0) return;
  enqueue.assign({ roomQueue: context.roomQueue.filter((w) => !dropped(w)) });
  for (const wait of left) {
    if (wait.kind === 'pass') {
      const ref = own(context.bindings, wait.binding);
      if (ref) enqueue.sendTo(ref, { type: 'binding.waiting', at: wait.at });
    }
    enqueue.emit(store({ op: 'remove', missionId: wait.entry.id }));
    enqueue.emit(
      bus({
        type: 'raider.dropped',
        mission_id: wait.entry.id,
        slot: wait.entry.name,
        ...(wait.entry.binding !== undefined ? { binding: wait.entry.binding } : {}),
        reason: params.reason,
      }),
    );
  }
}

/**
 * Room was given back (`freed`, after `tickets` were counted): lets the
 * starts that wait for it through, oldest first. Nothing starts while the
 * hall stops.
 */
function makeRoom(
  context: HallContext,
  enqueue: HallEnqueue,
  params: { freed: number; tickets?: number; roomQueue?: RoomWait[]; stopping?: boolean },
): void {
  let tickets = (params.tickets ?? context.tickets) - params.freed;
  const roomQueue = [...(params.roomQueue ?? context.roomQueue)];
  const through: RoomWait[] = [];
  while (!params.stopping && (context.maxRunning === undefined || tickets < context.maxRunning)) {
    const next = roomQueue.shift();
    if (next === undefined) break;
    if (next.kind === 'offer' && slotHead(context, next.slot) !== next.entry.id) {
      // Its head was dropped meanwhile: the slot offers its next one (or rests), taking no room now.
      const ref = own(context.slots, next.slot);
      if (ref) enqueue.sendTo(ref, { type: 'slot.offerAccepted', missionId: next.entry.id, at: next.at });
      continue;
    }
    tickets++;
    through.push(next);
  }
  enqueue.assign({ tickets, roomQueue });
  for (const wait of through) {
    if (wait.kind === 'submit') routeMission(enqueue, { entry: wait.entry, at: wait.at, queued: true });
    else if (wait.kind === 'pass') passMission(context, enqueue, { binding: wait.binding, entry: wait.entry, at: wait.at, waited: true });
    else acceptOffer(context, enqueue, { slot: wait.slot, entry: wait.entry, at: wait.at });
  }
}

export const hallMachine = hallSetup
  .extend({
    actions: {
      acceptSpawn: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.spawn') return;
        const entry = missionOf(event);
        if (!roomFull(context)) {
          enqueue.assign({ tickets: context.tickets + 1 });
          routeMission(enqueue, { entry, at: event.at, ...(event.reqId !== undefined ? { reqId: event.reqId } : {}) });
          return;
        }
        // Over max_running: it waits, recorded in its slot's queue, until a run ends.
        const { slot } = slotOf(entry.name);
        const roomQueue = [...context.roomQueue, { kind: 'submit' as const, entry, at: event.at }];
        enqueue.assign({ roomQueue });
        enqueue.emit(store({ op: 'queue', queue: { kind: 'slot', slot }, entry }));
        enqueue.emit(bus({ type: 'raider.queued', slot: entry.name, queue_depth: roomQueue.length, mission_id: entry.id }));
        if (event.reqId !== undefined) {
          enqueue.emit(reply(event.reqId, { queued: 1, slot: entry.name, queue_depth: roomQueue.length, mission_id: entry.id }));
        }
      }),

      acceptClaimed: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cluster.claimed') return;
        const binding = effectiveBinding(slotOf(event.entry.name).slot, event.entry.binding);
        // The cluster's sessions table is the truth: another hall may have bound this binding since.
        if (binding !== undefined && event.session !== undefined && own(context.sessions, binding) !== event.session) {
          enqueue.assign({ sessions: { ...context.sessions, [binding]: event.session } });
        }
        enqueue.assign({ tickets: context.tickets + 1, reservedRunIds: { ...context.reservedRunIds, [event.entry.id]: event.runId } });
        routeMission(enqueue, { entry: event.entry, at: event.at, queued: true });
      }),

      refuseWhileStopping: hallSetup.enqueueActions(({ event, enqueue }) => {
        if (event.type === 'cmd.spawn' && event.reqId !== undefined) {
          enqueue.emit(reply(event.reqId, { error: 'the hall is stopping; the mission was not accepted' }));
        }
      }),

      refuseWhileBooting: hallSetup.enqueueActions(({ event, enqueue }) => {
        if (event.type === 'cmd.spawn' && event.reqId !== undefined) {
          enqueue.emit(reply(event.reqId, { error: 'the hall is starting; try again in a moment' }));
        }
      }),

      passToSlot: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'binding.pass') return;
        const params = {
          binding: event.binding,
          entry: event.entry,
          at: event.at,
          ...(event.reqId !== undefined ? { reqId: event.reqId } : {}),
        };
        // A new mission brought its room along; one that waited in the binding's queue needs room now.
        if (!event.waited) return passMission(context, enqueue, { ...params, waited: false });
        if (!roomFull(context)) {
          enqueue.assign({ tickets: context.tickets + 1 });
          return passMission(context, enqueue, { ...params, waited: true });
        }
        enqueue.assign({ roomQueue: [...context.roomQueue, { kind: 'pass', binding: event.binding, entry: event.entry, at: event.at }] });
      }),

      answerOffer: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'slot.offer') return;
        const slotRef = own(context.slots, event.slot);
        if (!slotRef) return;
        const params = { slot: event.slot, entry: event.entry, at: event.at };
        if (slotHead(context, event.slot) !== event.entry.id) {
          // Dropped meanwhile: the slot offers its next head (or rests) without taking room.
          enqueue.sendTo(slotRef, { type: 'slot.offerAccepted', missionId: event.entry.id, at: event.at });
          return;
        }
        if (roomFull(context)) {
          enqueue.assign({ roomQueue: [...context.roomQueue, { kind: 'offer', ...params }] });
          return;
        }
        enqueue.assign({ tickets: context.tickets + 1 });
        acceptOffer(context, enqueue, params);
      }),

      acceptBindingOffer: hallSetup.enqueueActions(({ context, event, enqueue, self }) => {
        if (event.type !== 'binding.offerAccepted') return;
        const slotRef = own(context.slots, event.slot);
        if (!slotRef) return;
        // The offered head was dropped on its way through the binding: the room it took is not used.
        if (slotHead(context, event.slot) !== event.missionId)
          makeRoom(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
        const session = own(context.sessions, event.binding);
        enqueue.sendTo(slotRef, {
          type: 'slot.offerAccepted',
          missionId: event.missionId,
          at: event.at,
          ...(session !== undefined ? { session } : {}),
        });
      }),

      noteRunCreated: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'slot.runCreated') return;
        const explicit = explicitBinding(event.entry);
        enqueue.assign({ liveRuns: context.liveRuns + 1 });
        if (own(context.reservedRunIds, event.entry.id) !== undefined) {
          const { [event.entry.id]: _, ...reservedRunIds } = context.reservedRunIds;
          enqueue.assign({ reservedRunIds });
        }
        const bindingRef = explicit !== undefined ? own(context.bindings, explicit) : undefined;
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.started', runId: event.runId });
      }),

      reportSpawned: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'run.spawned') return;
        const { binding, session } = event;
        const bound = binding !== undefined && session !== undefined ? { session, binding } : undefined;
        if (bound && event.sessionCreated) {
          enqueue.assign({ sessions: { ...context.sessions, [bound.binding]: bound.session } });
          enqueue.emit(store({ op: 'bind', ...bound }));
          enqueue.emit(bus({ type: 'session.bound', ...bound }));
        }
        const boundFields = bound ?? {};
        enqueue.emit({
          type: 'registry.runStarted',
          run: {
            id: event.runId,
            slot: event.slot,
            base_name: event.baseName,
            pid: event.pid,
            mission: event.entry.mission,
            mission_id: event.entry.id,
            ...boundFields,
            events_path: event.eventsPath,
            log_path: event.logPath,
            started_at: event.startedAt,
          },
        });
        if (event.adopted) return;
        enqueue.emit(store({ op: 'pid', runId: event.runId, pid: event.pid }));
        enqueue.emit(
          bus({
            type: 'raider.spawned',
            id: event.runId,
            pid: event.pid,
            slot: event.slot,
            base_name: event.baseName,
            mission_id: event.entry.id,
            ...boundFields,
          }),
        );
        if (event.sessionError !== undefined && event.binding !== undefined) {
          enqueue.emit(bus({ type: 'hall.session_error', binding: event.binding, error: event.sessionError, id: event.runId }));
        }
        if (event.reqId !== undefined) {
          enqueue.emit(
            reply(event.reqId, {
              id: event.runId,
              pid: event.pid,
              slot: event.slot,
              events_path: event.eventsPath,
              mission_id: event.entry.id,
              ...boundFields,
            }),
          );
        }
      }),

      reportRunEnded: hallSetup.enqueueActions(({ context, event, enqueue, self }) => {
        if (event.type !== 'slot.runEnded') return;
        const out: RunOutput = event.output;
        enqueue.assign({ liveRuns: context.liveRuns - 1 });
        const explicit = explicitBinding(out.entry);
        if (out.kind === 'refused') {
          enqueue.emit(store({ op: 'remove', missionId: out.entry.id }));
          enqueue.emit(
            bus({
              type: 'raider.refused',
              status: 'refused',
              slot: out.slot,
              name: out.entry.name,
              ...(out.binding !== undefined ? { binding: out.binding } : {}),
              reason: out.reason,
              error: out.error,
              queued: out.queued,
              mission_id: out.entry.id,
            }),
          );
          if (out.reqId !== undefined) {
            enqueue.emit(reply(out.reqId, { status: 'refused', reason: out.reason, error: out.error }));
          }
        } else {
          const o = out.outcome;
          // A run another hall already reported (this hall had been taken for lost) ends silently.
          if (own(context.silenced, out.runId)) {
            const { [out.runId]: _, ...silenced } = context.silenced;
            enqueue.assign({ silenced });
          } else enqueue.emit(bus(doneEvent(out)));
          enqueue.emit(store({ op: 'end', runId: out.runId }));
          if (out.unstarted) enqueue.emit(store({ op: 'remove', missionId: out.entry.id }));
          enqueue.emit({ type: 'registry.runEnded', runId: out.runId });
          if (out.unstarted && out.reqId !== undefined) {
            enqueue.emit(reply(out.reqId, { error: `command failed: ${o.error ?? 'the raider could not be started'}` }));
          }
        }
        const bindingRef = explicit !== undefined ? own(context.bindings, explicit) : undefined;
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.ended', runId: out.runId, at: out.endedAt });
        makeRoom(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
      }),

      reportSlotQueued: hallSetup.enqueueActions(({ context, event, enqueue, self }) => {
        if (event.type !== 'slot.queued') return;
        enqueue.emit(store({ op: 'queue', queue: { kind: 'slot', slot: event.slot }, entry: event.entry }));
        enqueue.emit(bus({ type: 'raider.queued', slot: event.slot, queue_depth: event.depth, mission_id: event.entry.id }));
        if (event.reqId !== undefined) {
          enqueue.emit(reply(event.reqId, { queued: 1, slot: event.slot, queue_depth: event.depth, mission_id: event.entry.id }));
        }
        // The binding passed this mission on; it waits in the slot, so the binding is free again.
        const explicit = explicitBinding(event.entry);
        const bindingRef = explicit !== undefined ? own(context.bindings, explicit) : undefined;
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.waiting', at: 0 });
        // It waits in its slot: the room it took goes to the next start.
        makeRoom(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
      }),

      reportBindingQueued: hallSetup.enqueueActions(({ context, event, enqueue, self }) => {
        if (event.type !== 'binding.queued') return;
        const name = event.entry.name;
        enqueue.emit(store({ op: 'queue', queue: { kind: 'binding', binding: event.binding }, entry: event.entry }));
        enqueue.emit(
          bus({ type: 'raider.queued', slot: name, binding: event.binding, queue_depth: event.depth, mission_id: event.entry.id }),
        );
        if (event.reqId !== undefined) {
          enqueue.emit(
            reply(event.reqId, {
              queued: 1,
              slot: name,
              binding: event.binding,
              queue_depth: event.depth,
              mission_id: event.entry.id,
            }),
          );
        }
        const fromSlot = event.fromSlot !== undefined ? own(context.slots, event.fromSlot) : undefined;
        if (fromSlot) enqueue.sendTo(fromSlot, { type: 'slot.offerDeclined', missionId: event.entry.id, at: 0 });
        makeRoom(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
      }),

      reportDropped: hallSetup.enqueueActions(({ event, enqueue }) => {
        if (event.type !== 'slot.dropped' && event.type !== 'binding.dropped') return;
        for (const entry of event.entries) {
          enqueue.emit(store({ op: 'remove', missionId: entry.id }));
          enqueue.emit(
            bus({
              type: 'raider.dropped',
              mission_id: entry.id,
              slot: entry.name,
              ...(entry.binding !== undefined ? { binding: entry.binding } : {}),
              reason: event.reason,
            }),
          );
        }
      }),

      signalRun: hallSetup.enqueueActions(({ context, event, enqueue, system }) => {
        if (event.type !== 'cmd.kill' && event.type !== 'cmd.cancel') return;
        const id = event.id;
        const ref = system.get(runActorId(id));
        if (!ref) {
          const waiting = event.type === 'cmd.cancel' ? findWaiting(context, id) : undefined;
          if (waiting === undefined) {
            enqueue.emit(reply(event.reqId, { error: 'raider not found' }));
            return;
          }
          if (waiting.queue.kind === 'slot')
            enqueue.sendTo(waiting.queue.ref, { type: 'slot.dropMission', missionId: id, reason: 'cancelled' });
          else if (waiting.queue.kind === 'binding')
            enqueue.sendTo(waiting.queue.ref, { type: 'binding.dropMission', missionId: id, reason: 'cancelled' });
          else dropFromRoom(context, enqueue, { reason: 'cancelled', missionId: id });
          const { entry } = waiting;
          enqueue.emit(
            reply(event.reqId, {
              dropped: 1,
              mission_id: entry.id,
              slot: entry.name,
              ...(entry.binding !== undefined ? { binding: entry.binding } : {}),
            }),
          );
          return;
        }
        if (event.type === 'cmd.kill') {
          enqueue.sendTo(ref, { type: 'run.kill' });
          enqueue.emit(reply(event.reqId, { killed: 1, id }));
        } else {
          enqueue.sendTo(ref, { type: 'run.cancel' });
          enqueue.emit(reply(event.reqId, { cancelled: 1, id }));
        }
      }),

      resetSession: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.sessionReset') return;
        const answer = (body: ReplyBody) => {
          if (event.reqId !== undefined) enqueue.emit(reply(event.reqId, body));
        };
        const binding = event.binding;
        const old = own(context.sessions, binding);
        if (old === undefined) return answer({ error: `no session bound to ${binding}` });
        const { [binding]: _, ...sessions } = context.sessions;
        enqueue.assign({ sessions });
        enqueue.emit(store({ op: 'unbind', binding }));
        enqueue.emit(bus({ type: 'session.reset', binding, session: old }));
        answer({ reset: 1, binding, session: old });
      }),

      bindSession: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.bindSession') return;
        if (own(context.sessions, event.binding) !== event.session) {
          enqueue.assign({ sessions: { ...context.sessions, [event.binding]: event.session } });
          enqueue.emit(store({ op: 'bind', binding: event.binding, session: event.session }));
          enqueue.emit(bus({ type: 'session.bound', binding: event.binding, session: event.session }));
        }
        if (event.reqId !== undefined) enqueue.emit(reply(event.reqId, { bound: 1, binding: event.binding, session: event.session }));
      }),

      unbindSession: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.unbindSession') return;
        const old = own(context.sessions, event.binding);
        if (old !== undefined) {
          const { [event.binding]: _, ...sessions } = context.sessions;
          enqueue.assign({ sessions });
          enqueue.emit(store({ op: 'unbind', binding: event.binding }));
        }
        if (event.reqId !== undefined) enqueue.emit(reply(event.reqId, { unbound: old === undefined ? 0 : 1, binding: event.binding }));
      }),

      dropQueued: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.dropQueued') return;
        const ref = own(context.bindings, event.binding);
        if (ref) enqueue.sendTo(ref, { type: 'binding.drop' });
        dropFromRoom(context, enqueue, { reason: 'binding_closed', binding: event.binding });
        for (const slotRef of Object.values(context.slots)) enqueue.sendTo(slotRef, { type: 'slot.drop', binding: event.binding });
        if (event.reqId !== undefined) enqueue.emit(reply(event.reqId, { dropped: 1, binding: event.binding }));
      }),

      stopReplacedRuns: hallSetup.enqueueActions(({ context, event, enqueue, system }) => {
        if (event.type !== 'cluster.replaced') return;
        const silenced = { ...context.silenced };
        for (const runId of event.runIds) {
          const ref = system.get(runActorId(runId));
          if (!ref) continue;
          silenced[runId] = true;
          enqueue.sendTo(ref, { type: 'run.kill' });
        }
        enqueue.assign({ silenced });
      }),

      boot: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'hall.boot') return;
        const slotsToDrain = new Set<string>();
        const bindingsToDrain = new Set<string>();
        for (const run of context.adopted) {
          const slot = slotOf(run.entry.name).slot;
          const explicit = explicitBinding(run.entry);
          enqueue({ type: 'ensureSlot', params: { name: slot } });
          slotsToDrain.add(slot);
          enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), {
            type: 'slot.adopt',
            ...run,
          });
          if (explicit !== undefined) {
            enqueue({ type: 'ensureBinding', params: { binding: explicit } });
            bindingsToDrain.add(explicit);
            enqueue.sendTo(({ context: c }) => bindingRefOf(c, explicit), { type: 'binding.started', runId: run.runId });
          }
        }
        enqueue.assign({ liveRuns: context.liveRuns + context.adopted.length, tickets: context.tickets + context.adopted.length });
        // A plain slot's queue holds only missions that waited for room: they wait for it again, in order.
        const forRoom: RoomWait[] = [];
        const slotQueues: Record<string, Mission[]> = {};
        for (const [slot, queue] of Object.entries(context.slotQueues)) {
          if (slotOf(slot).singleton) slotQueues[slot] = queue;
          else for (const entry of queue) forRoom.push({ kind: 'submit', entry, at: event.at });
        }
        enqueue.assign({ slotQueues, roomQueue: [...context.roomQueue, ...forRoom] });
        for (const [slot, queue] of Object.entries(slotQueues)) {
          if (queue.length === 0) continue;
          enqueue({ type: 'ensureSlot', params: { name: slot } });
          slotsToDrain.add(slot);
        }
        for (const [binding, queue] of Object.entries(context.bindingQueues)) {
          if (queue.length === 0) continue;
          enqueue({ type: 'ensureBinding', params: { binding } });
          bindingsToDrain.add(binding);
        }
        // What a previous hall left waiting starts first: slots in name order, then bindings.
        for (const slot of [...slotsToDrain].sort()) {
          enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), { type: 'slot.drain', at: event.at });
        }
        for (const binding of [...bindingsToDrain].sort()) {
          enqueue.sendTo(({ context: c }) => bindingRefOf(c, binding), { type: 'binding.drain', at: event.at });
        }
        for (const run of context.ended) {
          enqueue.emit(bus(doneEvent(run)));
          enqueue.emit(store({ op: 'end', runId: run.runId }));
        }
        if (forRoom.length > 0) {
          makeRoom(context, enqueue, {
            freed: 0,
            tickets: context.tickets + context.adopted.length,
            roomQueue: [...context.roomQueue, ...forRoom],
          });
        }
        enqueue.emit(bus({ type: 'hall.started', root: context.root }));
      }),
      beginStopping: hallSetup.enqueueActions(({ context, enqueue }) => {
        enqueue.emit(bus({ type: 'hall.stopping' }));
        for (const ref of Object.values(context.bindings)) enqueue.sendTo(ref, { type: 'binding.stop' });
        for (const ref of Object.values(context.slots)) enqueue.sendTo(ref, { type: 'slot.stop' });
      }),
      forceKill: hallSetup.enqueueActions(({ context, enqueue }) => {
        for (const ref of Object.values(context.slots)) enqueue.sendTo(ref, { type: 'slot.forceKill' });
      }),
    },
  })
  .createMachine({
    id: 'hall',
    context: ({ input }) => ({
      ...input,
      slots: {},
      bindings: {},
      liveRuns: 0,
      tickets: 0,
      roomQueue: [],
      silenced: {},
      reservedRunIds: {},
    }),
    initial: 'booting',
    on: {
      // Reports from the actor tree are handled in every state: nothing a run says is lost.
      'slot.runCreated': { actions: 'noteRunCreated' },
      'run.spawned': { actions: 'reportSpawned' },
      'slot.runEnded': { actions: 'reportRunEnded' },
      'slot.queued': { actions: 'reportSlotQueued' },
      'binding.queued': { actions: 'reportBindingQueued' },
      'slot.dropped': { actions: 'reportDropped' },
      'binding.dropped': { actions: 'reportDropped' },
      'cmd.kill': { actions: 'signalRun' },
      'cmd.cancel': { actions: 'signalRun' },
      'cmd.sessionReset': { actions: 'resetSession' },
      'cmd.dropQueued': { actions: 'dropQueued' },
      'cmd.bindSession': { actions: 'bindSession' },
      'cmd.unbindSession': { actions: 'unbindSession' },
      'cluster.replaced': { actions: 'stopReplacedRuns' },
    },
    states: {
      booting: {
        on: {
          'hall.boot': { target: 'running', actions: 'boot' },
          'hall.stop': 'stopping',
          // Before the boot nothing may overtake the missions a previous hall left waiting.
          'cmd.spawn': { actions: 'refuseWhileBooting' },
        },
      },
      running: {
        on: {
          'cmd.spawn': { actions: 'acceptSpawn' },
          'cluster.claimed': { actions: 'acceptClaimed' },
          'binding.pass': { actions: 'passToSlot' },
          'slot.offer': { actions: 'answerOffer' },
          'binding.offerAccepted': { actions: 'acceptBindingOffer' },
          'hall.stop': 'stopping',
        },
      },
      stopping: {
        entry: 'beginStopping',
        always: { guard: 'noLiveRuns', target: 'stopped' },
        after: {
          shutdownGrace: { actions: 'forceKill' },
          lastResort: { target: 'stopped' },
        },
        on: {
          'cmd.spawn': { actions: 'refuseWhileStopping' },
        },
      },
      stopped: {
        type: 'final',
        entry: emit({ type: 'hall.stopped' } as const),
      },
    },
  });
