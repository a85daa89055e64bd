/**
 * The hall root actor: owns the slots and binding queues, routes missions
 * between them, answers control commands, and keeps the session of each
 * binding. Lifecycle: booting → running → stopping → stopped.
 *
 * It decides; it never does I/O. What it decided leaves as emitted events
 * (see hall-effects.ts) that adapters carry out.
 */
import { assign, emit, enqueueActions, setup, type ActorRefFrom, type ParameterizedObject } from 'xstate';
import type { Mission, TelegramTarget } from '../domain/mission.js';
import { effectiveBinding, slotBinding, slotOf } from '../domain/names.js';
import { ownEntry as own } from '../domain/own-entry.js';
import type { RunIdCursor } from '../domain/run-id.js';
import { bindingQueueMachine, type BindingQueueReport } from './binding-queue.machine.js';
import { dropWaits, makeRoom, type Room, type RoomWait, roomFull, roomToFront, waitingForRoom } from './hall-admission.js';
import { type BindingRef, type SlotRef, slotHeadId, slotWaitingPlace, waitingInBinding, waitingInSlot } from './hall-children.js';
import type { HallEmitted, ReplyBody } from './hall-effects.js';
import {
  bindingQueuedEvent,
  bindingQueuedReply,
  busEffect as bus,
  cancelledWaitingReply,
  doneEvent,
  droppedEvent,
  type EndedRun,
  liveRunOf,
  missionQueuedEvent,
  missionQueuedReply,
  movedEvent,
  movedReply,
  refusedEvent,
  refusedReply,
  replyEffect as reply,
  slotQueuedEvent,
  slotQueuedReply,
  type SlotQueued,
  spawnedEvent,
  spawnedReply,
  storeEffect as store,
  unstartedReply,
} from './hall-payloads.js';
import type { RunOutput, RunPreparedReport, RunSpawnedReport } from './run.machine.js';
import { runActorId } from './run-host.js';
import { type AdoptedRun, type DropReason, slotMachine, type SlotReport } from './slot.machine.js';

export type { EndedRun };
export type { RoomWait } from './hall-admission.js';

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
  /** Moves a waiting mission (by its id) to the front of its queue. */
  | { type: 'cmd.queueFront'; reqId: string; id: string }
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
   * it), with the session its binding continues there and the run id it reserved.
   */
  | { type: 'cluster.claimed'; entry: Mission; session?: string; runId: string; at: number }
  /** This hall was taken for lost and replaced: these runs of it were reported by another hall; stop them, silently. */
  | { type: 'cluster.replaced'; runIds: string[] }
  | { type: 'hall.stop' }
  | HallCommand
  | SlotReport
  | BindingQueueReport
  | RunPreparedReport
  | RunSpawnedReport;

/** The event of one type: what an action with typed params is given. */
type EventOf<T extends HallEvent['type']> = Extract<HallEvent, { type: T }>;

/** The mission a spawn command asks for, as its queues keep it (the gateway makes it too, for a shared cluster). */
/** Its keys in sorted order: the store and the replies then write it with the native JSON writer (protocol/canonical-json.ts). */
export function missionOf(cmd: Omit<SpawnCommand, 'type' | 'reqId'>): Mission {
  // Most missions have none of the optional fields: one literal, no spreads (it is on every spawn's path).
  if (cmd.binding === undefined && cmd.cwd === undefined && cmd.permission_mode === undefined && cmd.telegram === undefined) {
    return { id: cmd.missionId, mission: cmd.mission, name: cmd.name };
  }
  return {
    ...(cmd.binding !== undefined ? { binding: cmd.binding } : {}),
    ...(cmd.cwd !== undefined ? { cwd: cmd.cwd } : {}),
    id: cmd.missionId,
    mission: cmd.mission,
    name: cmd.name,
    ...(cmd.permission_mode !== undefined ? { permission_mode: cmd.permission_mode } : {}),
    ...(cmd.telegram !== undefined ? { telegram: cmd.telegram } : {}),
  };
}

/** A waiting mission and the queue actor that holds it (or the hall's own wait for room). */
interface Waiting {
  entry: Mission;
  queue: { kind: 'slot'; ref: SlotRef } | { kind: 'binding'; ref: BindingRef } | { kind: 'room' };
}

/** Finds a waiting mission by its id in the wait for room and the slot and binding queues (these live in the children). */
function findWaiting(context: HallContext, missionId: string): Waiting | undefined {
  const forRoom = waitingForRoom(context.roomQueue, missionId);
  if (forRoom) return { entry: forRoom, queue: { kind: 'room' } };
  for (const ref of Object.values(context.slots)) {
    const entry = waitingInSlot(ref, missionId);
    if (entry) return { entry, queue: { kind: 'slot', ref } };
  }
  for (const ref of Object.values(context.bindings)) {
    const entry = waitingInBinding(ref, missionId);
    if (entry) return { entry, queue: { kind: 'binding', ref } };
  }
  return undefined;
}

function notWaiting(missionId: string): string {
  return `no waiting mission ${missionId}: it started, was dropped, or never was (\`raider hall queue\` lists the waiting ids)`;
}

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

/** The queue actor of a mission's explicit binding, if it has one and the actor exists. */
function bindingRefOfEntry(context: HallContext, entry: Mission): BindingRef | undefined {
  return entry.binding !== undefined ? own(context.bindings, entry.binding) : undefined;
}

/** Records, announces and answers a mission that waits in a numbered slot's queue. */
function tellSlotQueued(enqueue: HallEnqueue, queued: SlotQueued): void {
  enqueue.emit(store({ op: 'queue', queue: { kind: 'slot', slot: queued.slot }, entry: queued.entry }));
  enqueue.emit(bus(slotQueuedEvent(queued)));
  if (queued.reqId !== undefined) enqueue.emit(reply(queued.reqId, slotQueuedReply(queued)));
}

/**
 * A new mission for a numbered slot that runs or offers one waits in its
 * queue: the hall reads that from the slot's snapshot and tells it in this
 * step, instead of submitting it and hearing `slot.queued` back (two machine
 * steps more on the path of every queued spawn). It takes no room under
 * `max_running`: it does not start. False when the slot would start it (or
 * has no actor yet): it is submitted as any other.
 */
function holdInBusySlot(context: HallContext, enqueue: HallEnqueue, params: { entry: Mission; at: number; reqId?: string }): boolean {
  const { entry } = params;
  const slot = slotOf(entry.name).slot;
  const ref = own(context.slots, slot);
  // A spawn comes from outside the tree: the read is exact (hall-children.ts); a slot freed meanwhile offers it in turn.
  const depth = ref ? slotWaitingPlace(ref) : undefined;
  if (ref === undefined || depth === undefined) return false;
  // The slot holds it before anyone hears of it.
  enqueue.sendTo(ref, { type: 'slot.hold', entry, at: params.at });
  tellSlotQueued(enqueue, { type: 'slot.queued', slot, entry, depth, ...(params.reqId !== undefined ? { reqId: params.reqId } : {}) });
  return true;
}

/** The mission a slot would start next, read where an answer to its offer is decided. */
function slotHead(context: HallContext, slot: string): string | undefined {
  const ref = own(context.slots, slot);
  return ref ? slotHeadId(ref) : undefined;
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

/** The hall's own actions that its other actions enqueue by name. */
type EnsureAction = { type: 'ensureSlot'; params: { name: string } } | { type: 'ensureBinding'; params: { binding: string } };

/**
 * An action of the hall that is given what it needs as typed params (bound
 * where the transition names it), rather than reading and re-checking the
 * event: setup's own enqueueActions takes no params.
 */
function hallAction<P extends ParameterizedObject['params'] | undefined>(
  collect: Parameters<
    typeof enqueueActions<HallContext, HallEvent, P, HallEvent, never, EnsureAction, never, 'shutdownGrace' | 'lastResort', HallEmitted>
  >[0],
) {
  return enqueueActions(collect);
}

/** What an action of the hall may enqueue: the helpers below add to the action that calls them. */
type HallEnqueue = Parameters<Parameters<typeof hallAction<undefined>>[0]>[0]['enqueue'];

/** Sends a mission that has room on its way: to its binding's queue, or to its slot. */
function routeMission(
  context: HallContext,
  enqueue: HallEnqueue,
  params: { entry: Mission; at: number; reqId?: string; queued?: boolean },
): void {
  const { entry } = params;
  const reqId = params.reqId !== undefined ? { reqId: params.reqId } : {};
  const explicit = entry.binding;
  if (explicit !== undefined) {
    // Binding queues are never removed either.
    if (!own(context.bindings, explicit)) enqueue({ type: 'ensureBinding', params: { binding: explicit } });
    enqueue.sendTo(({ context: c }) => bindingRefOf(c, explicit), { type: 'binding.submit', entry, at: params.at, ...reqId });
    return;
  }
  const binding = effectiveBinding(slotOf(entry.name).slot, undefined);
  submitToSlot(context, enqueue, { entry, at: params.at, binding, reqId: params.reqId, queued: params.queued === true });
}

/** Hands a binding's mission to its slot, in the binding's session. */
function passMission(
  context: HallContext,
  enqueue: HallEnqueue,
  params: { binding: string; entry: Mission; at: number; reqId?: string; waited: boolean },
): void {
  submitToSlot(context, enqueue, {
    entry: params.entry,
    at: params.at,
    binding: params.binding,
    reqId: params.reqId,
    queued: params.waited,
  });
}

/**
 * Submits a mission to its slot, with its binding's session and its reserved
 * run id as they stand when the submit is sent (an action earlier in the
 * same step may have just set them).
 */
function submitToSlot(
  context: HallContext,
  enqueue: HallEnqueue,
  params: { entry: Mission; at: number; binding: string | undefined; reqId: string | undefined; queued: boolean },
): void {
  const { entry, binding } = params;
  const { slot } = slotOf(entry.name);
  // Slots are never removed: one this context knows needs no assign step (one per spawn otherwise).
  if (!own(context.slots, slot)) enqueue({ type: 'ensureSlot', params: { name: entry.name } });
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
        ...(params.reqId !== undefined ? { reqId: params.reqId } : {}),
        ...(params.queued ? { queued: true } : {}),
      };
    },
  );
}

/** The head of a numbered slot may start (room taken): its binding decides if it is free. */
function acceptOffer(context: HallContext, enqueue: HallEnqueue, params: { slot: string; entry: Mission; at: number }): void {
  const slotRef = own(context.slots, params.slot);
  if (!slotRef) return;
  const explicit = params.entry.binding;
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
  // A claimed mission that waited here for its numbered slot starts under the id its claim reserved.
  const runId = own(context.reservedRunIds, params.entry.id);
  enqueue.sendTo(slotRef, {
    type: 'slot.offerAccepted',
    missionId: params.entry.id,
    at: params.at,
    ...(session !== undefined ? { session } : {}),
    ...(runId !== undefined ? { runId } : {}),
  });
}

/** Drops missions waiting for room (a cancel by id, a closed binding); a passed mission frees its binding. */
function dropFromRoom(
  context: HallContext,
  enqueue: HallEnqueue,
  params: { reason: DropReason } & ({ missionId: string } | { binding: string }),
): void {
  const { roomQueue, dropped } = dropWaits(context.roomQueue, params);
  if (dropped.length === 0) return;
  enqueue.assign({ roomQueue });
  for (const wait of dropped) {
    if (wait.kind === 'pass') {
      const ref = own(context.bindings, wait.binding);
      if (ref) enqueue.sendTo(ref, { type: 'binding.waiting', at: wait.at });
    }
    enqueue.emit(store({ op: 'remove', missionId: wait.entry.id }));
    enqueue.emit(bus(droppedEvent(wait.entry, params.reason)));
  }
}

/**
 * Room was given back (`freed`): the starts that `makeRoom` lets through go
 * on their way, oldest first. `room`: the room as it stands in this step,
 * when an earlier action of the step changed it (the context's otherwise).
 */
function letThrough(context: HallContext, enqueue: HallEnqueue, params: { freed: number; stopping: boolean; room?: Room }): void {
  const made = makeRoom(params.room ?? context, params, (slot) => slotHead(context, slot));
  for (const offer of made.stale) {
    // Its head was dropped or moved meanwhile: the slot offers its next one (or rests), taking no room now.
    const ref = own(context.slots, offer.slot);
    if (ref) enqueue.sendTo(ref, { type: 'slot.offerAccepted', missionId: offer.entry.id, at: offer.at });
  }
  enqueue.assign({ tickets: made.tickets, roomQueue: made.roomQueue });
  for (const wait of made.through) {
    if (wait.kind === 'submit') routeMission(context, enqueue, { entry: wait.entry, at: wait.at, queued: true });
    else if (wait.kind === 'pass') passMission(context, enqueue, { binding: wait.binding, entry: wait.entry, at: wait.at, waited: true });
    else acceptOffer(context, enqueue, { slot: wait.slot, entry: wait.entry, at: wait.at });
  }
}

/** Tells what a move to the front did: recorded and announced only when its place changed. */
function reportMove(
  enqueue: HallEnqueue,
  params: { entry: Mission; binding: string | undefined; from: number; reqId: string | undefined },
): void {
  const { entry, binding, from } = params;
  // Moving the head is no change: nothing to record, nothing to tell.
  if (from > 1) {
    enqueue.emit(store({ op: 'front', missionId: entry.id }));
    enqueue.emit(bus(movedEvent(entry, binding, from)));
  }
  if (params.reqId !== undefined) enqueue.emit(reply(params.reqId, movedReply(entry, binding, from)));
}

export const hallMachine = hallSetup
  .extend({
    actions: {
      acceptSpawn: hallAction(({ context, enqueue }, cmd: SpawnCommand) => {
        const entry = missionOf(cmd);
        if (!roomFull(context)) {
          const reqId = cmd.reqId !== undefined ? { reqId: cmd.reqId } : {};
          // An explicit binding has its own queue first; a busy numbered slot's queue is known here.
          if (entry.binding === undefined && holdInBusySlot(context, enqueue, { entry, at: cmd.at, ...reqId })) return;
          enqueue.assign({ tickets: context.tickets + 1 });
          routeMission(context, enqueue, { entry, at: cmd.at, ...reqId });
          return;
        }
        // Over max_running: it waits, recorded in its slot's queue, until a run ends.
        const { slot } = slotOf(entry.name);
        const roomQueue = [...context.roomQueue, { kind: 'submit' as const, entry, at: cmd.at }];
        enqueue.assign({ roomQueue });
        enqueue.emit(store({ op: 'queue', queue: { kind: 'slot', slot }, entry }));
        enqueue.emit(bus(missionQueuedEvent(entry, roomQueue.length, undefined)));
        if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, missionQueuedReply(entry, roomQueue.length, undefined)));
      }),

      acceptClaimed: hallAction(({ context, enqueue }, claimed: EventOf<'cluster.claimed'>) => {
        const binding = effectiveBinding(slotOf(claimed.entry.name).slot, claimed.entry.binding);
        // The cluster's sessions table is the truth: another hall may have bound this binding since.
        if (binding !== undefined && claimed.session !== undefined && own(context.sessions, binding) !== claimed.session) {
          enqueue.assign({ sessions: { ...context.sessions, [binding]: claimed.session } });
        }
        enqueue.assign({
          tickets: context.tickets + 1,
          reservedRunIds: { ...context.reservedRunIds, [claimed.entry.id]: claimed.runId },
        });
        // Its run record goes through the store like any run's (run.prepared, then run.recorded), under the reserved id.
        routeMission(context, enqueue, { entry: claimed.entry, at: claimed.at, queued: true });
      }),

      /** Answers a spawn the hall cannot take in its current state. */
      refuseSpawn: hallAction(({ enqueue }, params: { reqId: string | undefined; error: string }) => {
        if (params.reqId !== undefined) enqueue.emit(reply(params.reqId, { error: params.error }));
      }),

      passToSlot: hallAction(({ context, enqueue }, pass: EventOf<'binding.pass'>) => {
        const params = {
          binding: pass.binding,
          entry: pass.entry,
          at: pass.at,
          ...(pass.reqId !== undefined ? { reqId: pass.reqId } : {}),
        };
        // A new mission brought its room along; one that waited in the binding's queue needs room now.
        if (!pass.waited) return passMission(context, enqueue, { ...params, waited: false });
        if (!roomFull(context)) {
          enqueue.assign({ tickets: context.tickets + 1 });
          return passMission(context, enqueue, { ...params, waited: true });
        }
        enqueue.assign({ roomQueue: [...context.roomQueue, { kind: 'pass', binding: pass.binding, entry: pass.entry, at: pass.at }] });
      }),

      answerOffer: hallAction(({ context, enqueue }, offer: EventOf<'slot.offer'>) => {
        const slotRef = own(context.slots, offer.slot);
        if (!slotRef) return;
        const params = { slot: offer.slot, entry: offer.entry, at: offer.at };
        if (slotHead(context, offer.slot) !== offer.entry.id) {
          // Dropped or moved meanwhile: the slot offers its next head (or rests) without taking room.
          enqueue.sendTo(slotRef, { type: 'slot.offerAccepted', missionId: offer.entry.id, at: offer.at });
          return;
        }
        if (roomFull(context)) {
          enqueue.assign({ roomQueue: [...context.roomQueue, { kind: 'offer', ...params }] });
          return;
        }
        enqueue.assign({ tickets: context.tickets + 1 });
        acceptOffer(context, enqueue, params);
      }),

      acceptBindingOffer: hallAction(({ context, enqueue, self }, accepted: EventOf<'binding.offerAccepted'>) => {
        const slotRef = own(context.slots, accepted.slot);
        if (!slotRef) return;
        // The offered head was dropped on its way through the binding: the room it took is not used.
        if (slotHead(context, accepted.slot) !== accepted.missionId)
          letThrough(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
        const session = own(context.sessions, accepted.binding);
        const runId = own(context.reservedRunIds, accepted.missionId);
        enqueue.sendTo(slotRef, {
          type: 'slot.offerAccepted',
          missionId: accepted.missionId,
          at: accepted.at,
          ...(session !== undefined ? { session } : {}),
          ...(runId !== undefined ? { runId } : {}),
        });
      }),

      noteRunCreated: hallAction(({ context, enqueue }, created: EventOf<'slot.runCreated'>) => {
        enqueue.assign({ liveRuns: context.liveRuns + 1 });
        if (own(context.reservedRunIds, created.entry.id) !== undefined) {
          const { [created.entry.id]: _, ...reservedRunIds } = context.reservedRunIds;
          enqueue.assign({ reservedRunIds });
        }
        const bindingRef = bindingRefOfEntry(context, created.entry);
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.started', runId: created.runId });
      }),

      /**
       * A run is about to start: its record goes to the store like every other
       * durable write, and only then does the run hear that it may start (the
       * emitted store operation is carried out before the run gets this send).
       */
      recordRun: hallAction(({ enqueue, system }, prepared: RunPreparedReport) => {
        enqueue.emit(store({ op: 'run', run: prepared.run }));
        const run = system.get(runActorId(prepared.run.id));
        if (run) enqueue.sendTo(run, { type: 'run.recorded' });
      }),

      reportSpawned: hallAction(({ context, enqueue }, report: RunSpawnedReport) => {
        const { binding, session } = report;
        if (binding !== undefined && session !== undefined && report.sessionCreated) {
          enqueue.assign({ sessions: { ...context.sessions, [binding]: session } });
          enqueue.emit(store({ op: 'bind', session, binding }));
          enqueue.emit(bus({ type: 'session.bound', session, binding }));
        }
        enqueue.emit({ type: 'registry.runStarted', run: liveRunOf(report) });
        if (report.adopted) return;
        enqueue.emit(store({ op: 'pid', runId: report.runId, pid: report.pid }));
        enqueue.emit(bus(spawnedEvent(report)));
        if (report.sessionError !== undefined && binding !== undefined) {
          enqueue.emit(bus({ type: 'hall.session_error', binding, error: report.sessionError, id: report.runId }));
        }
        if (report.reqId !== undefined) enqueue.emit(reply(report.reqId, spawnedReply(report)));
      }),

      reportRunEnded: hallAction(({ context, enqueue, self }, out: RunOutput) => {
        enqueue.assign({ liveRuns: context.liveRuns - 1 });
        if (out.kind === 'refused') {
          enqueue.emit(store({ op: 'remove', missionId: out.entry.id }));
          enqueue.emit(bus(refusedEvent(out)));
          if (out.reqId !== undefined) enqueue.emit(reply(out.reqId, refusedReply(out)));
        } else {
          // A run another hall already reported (this hall had been taken for lost) ends silently.
          const replaced = own(context.silenced, out.runId);
          if (replaced) {
            const { [out.runId]: _, ...silenced } = context.silenced;
            enqueue.assign({ silenced });
          } else enqueue.emit(bus(doneEvent(out)));
          enqueue.emit(store({ op: 'end', runId: out.runId }));
          // The mission of a replaced run went back to the cluster's queue, where this hall may have claimed it
          // again meanwhile: removing it would drop that claim, and the mission with it, unrun and unreported.
          if (out.unstarted && !replaced) enqueue.emit(store({ op: 'remove', missionId: out.entry.id }));
          enqueue.emit({ type: 'registry.runEnded', runId: out.runId });
          if (out.unstarted && out.reqId !== undefined) enqueue.emit(reply(out.reqId, unstartedReply(out.outcome)));
        }
        const bindingRef = bindingRefOfEntry(context, out.entry);
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.ended', runId: out.runId, at: out.endedAt });
        letThrough(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
      }),

      reportSlotQueued: hallAction(({ context, enqueue, self }, queued: SlotQueued) => {
        tellSlotQueued(enqueue, queued);
        // The binding passed this mission on; it waits in the slot, so the binding is free again.
        const bindingRef = bindingRefOfEntry(context, queued.entry);
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.waiting', at: 0 });
        // It waits in its slot: the room it took goes to the next start.
        letThrough(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
      }),

      reportBindingQueued: hallAction(({ context, enqueue, self }, queued: EventOf<'binding.queued'>) => {
        enqueue.emit(store({ op: 'queue', queue: { kind: 'binding', binding: queued.binding }, entry: queued.entry }));
        enqueue.emit(bus(bindingQueuedEvent(queued)));
        if (queued.reqId !== undefined) enqueue.emit(reply(queued.reqId, bindingQueuedReply(queued)));
        const fromSlot = queued.fromSlot !== undefined ? own(context.slots, queued.fromSlot) : undefined;
        if (fromSlot) enqueue.sendTo(fromSlot, { type: 'slot.offerDeclined', missionId: queued.entry.id, at: 0 });
        letThrough(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
      }),

      reportDropped: hallAction(({ enqueue }, dropped: { entries: Mission[]; reason: DropReason }) => {
        for (const entry of dropped.entries) {
          enqueue.emit(store({ op: 'remove', missionId: entry.id }));
          enqueue.emit(bus(droppedEvent(entry, dropped.reason)));
        }
      }),

      signalRun: hallAction(({ context, enqueue, system }, cmd: EventOf<'cmd.kill' | 'cmd.cancel'>) => {
        const id = cmd.id;
        const ref = system.get(runActorId(id));
        if (!ref) {
          const waiting = cmd.type === 'cmd.cancel' ? findWaiting(context, id) : undefined;
          if (waiting === undefined) {
            enqueue.emit(reply(cmd.reqId, { error: 'raider not found' }));
            return;
          }
          if (waiting.queue.kind === 'slot')
            enqueue.sendTo(waiting.queue.ref, { type: 'slot.dropMission', missionId: id, reason: 'cancelled' });
          else if (waiting.queue.kind === 'binding')
            enqueue.sendTo(waiting.queue.ref, { type: 'binding.dropMission', missionId: id, reason: 'cancelled' });
          else dropFromRoom(context, enqueue, { reason: 'cancelled', missionId: id });
          enqueue.emit(reply(cmd.reqId, cancelledWaitingReply(waiting.entry)));
          return;
        }
        if (cmd.type === 'cmd.kill') {
          enqueue.sendTo(ref, { type: 'run.kill' });
          enqueue.emit(reply(cmd.reqId, { killed: 1, id }));
        } else {
          enqueue.sendTo(ref, { type: 'run.cancel' });
          enqueue.emit(reply(cmd.reqId, { cancelled: 1, id }));
        }
      }),

      moveToFront: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.queueFront'>) => {
        const waiting = findWaiting(context, cmd.id);
        if (waiting === undefined) {
          enqueue.emit(reply(cmd.reqId, { error: notWaiting(cmd.id) }));
          return;
        }
        // The queue that holds it moves it and reports (slot.moved / binding.moved): its order is its own.
        if (waiting.queue.kind === 'slot')
          enqueue.sendTo(waiting.queue.ref, { type: 'slot.frontMission', missionId: cmd.id, reqId: cmd.reqId });
        else if (waiting.queue.kind === 'binding')
          enqueue.sendTo(waiting.queue.ref, { type: 'binding.frontMission', missionId: cmd.id, reqId: cmd.reqId });
        else {
          // The wait for room is the hall's own: it moves it here.
          const { roomQueue, from } = roomToFront(context.roomQueue, cmd.id);
          enqueue.assign({ roomQueue });
          reportMove(enqueue, { entry: waiting.entry, binding: undefined, from, reqId: cmd.reqId });
        }
      }),

      reportMoved: hallAction(({ enqueue }, moved: EventOf<'slot.moved' | 'binding.moved'>) => {
        const { entry, from } = moved;
        if (entry === undefined || from === undefined) {
          if (moved.reqId !== undefined) enqueue.emit(reply(moved.reqId, { error: notWaiting(moved.missionId) }));
          return;
        }
        const binding = moved.type === 'binding.moved' ? moved.binding : undefined;
        reportMove(enqueue, { entry, binding, from, reqId: moved.reqId });
      }),

      resetSession: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.sessionReset'>) => {
        const answer = (body: ReplyBody) => {
          if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, body));
        };
        const binding = cmd.binding;
        const old = own(context.sessions, binding);
        if (old === undefined) return answer({ error: `no session bound to ${binding}` });
        const { [binding]: _, ...sessions } = context.sessions;
        enqueue.assign({ sessions });
        enqueue.emit(store({ op: 'unbind', binding }));
        enqueue.emit(bus({ type: 'session.reset', binding, session: old }));
        answer({ reset: 1, binding, session: old });
      }),

      bindSession: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.bindSession'>) => {
        if (own(context.sessions, cmd.binding) !== cmd.session) {
          enqueue.assign({ sessions: { ...context.sessions, [cmd.binding]: cmd.session } });
          enqueue.emit(store({ op: 'bind', binding: cmd.binding, session: cmd.session }));
          enqueue.emit(bus({ type: 'session.bound', binding: cmd.binding, session: cmd.session }));
        }
        if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, { bound: 1, binding: cmd.binding, session: cmd.session }));
      }),

      unbindSession: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.unbindSession'>) => {
        const old = own(context.sessions, cmd.binding);
        if (old !== undefined) {
          const { [cmd.binding]: _, ...sessions } = context.sessions;
          enqueue.assign({ sessions });
          enqueue.emit(store({ op: 'unbind', binding: cmd.binding }));
        }
        if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, { unbound: old === undefined ? 0 : 1, binding: cmd.binding }));
      }),

      dropQueued: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.dropQueued'>) => {
        const ref = own(context.bindings, cmd.binding);
        if (ref) enqueue.sendTo(ref, { type: 'binding.drop' });
        dropFromRoom(context, enqueue, { reason: 'binding_closed', binding: cmd.binding });
        for (const slotRef of Object.values(context.slots)) enqueue.sendTo(slotRef, { type: 'slot.drop', binding: cmd.binding });
        if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, { dropped: 1, binding: cmd.binding }));
      }),

      stopReplacedRuns: hallAction(({ context, enqueue, system }, replaced: EventOf<'cluster.replaced'>) => {
        const silenced = { ...context.silenced };
        for (const runId of replaced.runIds) {
          const ref = system.get(runActorId(runId));
          if (!ref) continue;
          silenced[runId] = true;
          enqueue.sendTo(ref, { type: 'run.kill' });
        }
        enqueue.assign({ silenced });
      }),

      boot: hallAction(({ context, enqueue }, params: { at: number }) => {
        const slotsToDrain = new Set<string>();
        const bindingsToDrain = new Set<string>();
        for (const run of context.adopted) {
          const slot = slotOf(run.entry.name).slot;
          const explicit = run.entry.binding;
          enqueue({ type: 'ensureSlot', params: { name: slot } });
          slotsToDrain.add(slot);
          enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), { type: 'slot.adopt', ...run });
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
          else for (const entry of queue) forRoom.push({ kind: 'submit', entry, at: params.at });
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
          enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), { type: 'slot.drain', at: params.at });
        }
        for (const binding of [...bindingsToDrain].sort()) {
          enqueue.sendTo(({ context: c }) => bindingRefOf(c, binding), { type: 'binding.drain', at: params.at });
        }
        for (const run of context.ended) {
          enqueue.emit(bus(doneEvent(run)));
          enqueue.emit(store({ op: 'end', runId: run.runId }));
        }
        if (forRoom.length > 0) {
          letThrough(context, enqueue, {
            freed: 0,
            stopping: false,
            room: {
              maxRunning: context.maxRunning,
              tickets: context.tickets + context.adopted.length,
              roomQueue: [...context.roomQueue, ...forRoom],
            },
          });
        }
        // The slots and binding queues hold what waited now: the context keeps no copy, which
        // would keep every mission of a long queue alive after it ran.
        enqueue.assign({ slotQueues: {}, bindingQueues: {} });
        enqueue.emit(bus({ type: 'hall.started', root: context.root }));
      }),
      beginStopping: hallAction(({ context, enqueue }) => {
        enqueue.emit(bus({ type: 'hall.stopping' }));
        for (const ref of Object.values(context.bindings)) enqueue.sendTo(ref, { type: 'binding.stop' });
        for (const ref of Object.values(context.slots)) enqueue.sendTo(ref, { type: 'slot.stop' });
      }),
      forceKill: hallAction(({ context, enqueue }) => {
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
      'slot.runCreated': { actions: { type: 'noteRunCreated', params: ({ event }) => event } },
      'run.prepared': { actions: { type: 'recordRun', params: ({ event }) => event } },
      'run.spawned': { actions: { type: 'reportSpawned', params: ({ event }) => event } },
      'slot.runEnded': { actions: { type: 'reportRunEnded', params: ({ event }) => event.output } },
      'slot.queued': { actions: { type: 'reportSlotQueued', params: ({ event }) => event } },
      'binding.queued': { actions: { type: 'reportBindingQueued', params: ({ event }) => event } },
      'slot.dropped': { actions: { type: 'reportDropped', params: ({ event }) => event } },
      'binding.dropped': { actions: { type: 'reportDropped', params: ({ event }) => event } },
      'cmd.kill': { actions: { type: 'signalRun', params: ({ event }) => event } },
      'cmd.cancel': { actions: { type: 'signalRun', params: ({ event }) => event } },
      'cmd.queueFront': { actions: { type: 'moveToFront', params: ({ event }) => event } },
      'slot.moved': { actions: { type: 'reportMoved', params: ({ event }) => event } },
      'binding.moved': { actions: { type: 'reportMoved', params: ({ event }) => event } },
      'cmd.sessionReset': { actions: { type: 'resetSession', params: ({ event }) => event } },
      'cmd.dropQueued': { actions: { type: 'dropQueued', params: ({ event }) => event } },
      'cmd.bindSession': { actions: { type: 'bindSession', params: ({ event }) => event } },
      'cmd.unbindSession': { actions: { type: 'unbindSession', params: ({ event }) => event } },
      'cluster.replaced': { actions: { type: 'stopReplacedRuns', params: ({ event }) => event } },
    },
    states: {
      booting: {
        on: {
          'hall.boot': { target: 'running', actions: { type: 'boot', params: ({ event }) => event } },
          'hall.stop': 'stopping',
          // Before the boot nothing may overtake the missions a previous hall left waiting.
          'cmd.spawn': {
            actions: {
              type: 'refuseSpawn',
              params: ({ event }) => ({ reqId: event.reqId, error: 'the hall is starting; try again in a moment' }),
            },
          },
        },
      },
      running: {
        on: {
          'cmd.spawn': { actions: { type: 'acceptSpawn', params: ({ event }) => event } },
          'cluster.claimed': { actions: { type: 'acceptClaimed', params: ({ event }) => event } },
          'binding.pass': { actions: { type: 'passToSlot', params: ({ event }) => event } },
          'slot.offer': { actions: { type: 'answerOffer', params: ({ event }) => event } },
          'binding.offerAccepted': { actions: { type: 'acceptBindingOffer', params: ({ event }) => event } },
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
          'cmd.spawn': {
            actions: {
              type: 'refuseSpawn',
              params: ({ event }) => ({ reqId: event.reqId, error: 'the hall is stopping; the mission was not accepted' }),
            },
          },
        },
      },
      stopped: {
        type: 'final',
        entry: emit({ type: 'hall.stopped' } as const),
      },
    },
  });
