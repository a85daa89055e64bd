/**
 * Mission routing: where a mission with room goes (its binding's queue or
 * its slot, with its binding's session and its reserved run id), how an
 * offer of a numbered slot's head is answered, and how the starts that
 * `makeRoom` (hall-admission.ts) lets through are sent on their way.
 */
import type { Mission } from '../domain/mission.js';
import { effectiveBinding, slotBinding, slotOf } from '../domain/names.js';
import { ownEntry as own } from '../domain/own-entry.js';
import { makeRoom, type Room, roomFull, roomWaitPlace } from './hall-admission.js';
import { slotHeadId, slotQueueLength, slotWaitingPlace } from './hall-children.js';
import {
  bindingRefOf,
  type EventOf,
  type HallContext,
  type HallEnqueue,
  hallAction,
  slotRefOf,
  type SpawnCommand,
} from './hall-context.js';
import {
  busEffect as bus,
  missionQueuedEvent,
  missionQueuedReply,
  replyEffect as reply,
  slotQueuedEvent,
  slotQueuedReply,
  type SlotQueued,
  storeEffect as store,
} from './hall-payloads.js';
import { definedFields } from '../domain/defined-fields.js';

/** The mission a spawn command asks for, as its queues keep it (the gateway makes it too, for a shared cluster). */
/** Its keys in sorted order: the store and the replies then write it with the native JSON writer (protocol/canonical-json.ts). */
export function missionOf(cmd: Omit<SpawnCommand, 'type' | 'reqId'>): Mission {
  // Most missions have none of the optional fields: one literal, no spreads (it is on every spawn's path).
  if (cmd.binding === undefined && cmd.cwd === undefined && cmd.permission_mode === undefined && cmd.telegram === undefined) {
    return { id: cmd.missionId, mission: cmd.mission, name: cmd.name };
  }
  return {
    ...definedFields({ binding: cmd.binding, cwd: cmd.cwd }),
    id: cmd.missionId,
    mission: cmd.mission,
    name: cmd.name,
    ...definedFields({ permission_mode: cmd.permission_mode, telegram: cmd.telegram }),
  };
}

/** Records, announces and answers a mission that waits in a numbered slot's queue. */
export function tellSlotQueued(enqueue: HallEnqueue, queued: SlotQueued): void {
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
  tellSlotQueued(enqueue, { type: 'slot.queued', slot, entry, depth, ...definedFields({ reqId: params.reqId }) });
  return true;
}

/** The mission a slot would start next, read where an answer to its offer is decided. */
export function slotHead(context: HallContext, slot: string): string | undefined {
  const ref = own(context.slots, slot);
  return ref ? slotHeadId(ref) : undefined;
}

/** Sends a mission that has room on its way: to its binding's queue, or to its slot. */
export function routeMission(
  context: HallContext,
  enqueue: HallEnqueue,
  params: { entry: Mission; at: number; reqId?: string; queued?: boolean },
): void {
  const { entry } = params;
  const reqId = definedFields({ reqId: params.reqId });
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
        ...definedFields({ session, runId, reqId: params.reqId }),
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
    ...definedFields({ session, runId }),
  });
}

/**
 * Room was given back (`freed`): the starts that `makeRoom` lets through go
 * on their way, oldest first. `room`: the room as it stands in this step,
 * when an earlier action of the step changed it (the context's otherwise).
 */
export function letThrough(context: HallContext, enqueue: HallEnqueue, params: { freed: number; stopping: boolean; room?: Room }): void {
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

/** The actions that take a mission towards a start: each takes room, or waits for it. */
export const routingActions = {
  acceptSpawn: hallAction(({ context, enqueue }, cmd: SpawnCommand) => {
    const entry = missionOf(cmd);
    if (!roomFull(context)) {
      const reqId = definedFields({ reqId: cmd.reqId });
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
    if (cmd.reqId === undefined) return;
    const ref = own(context.slots, slot);
    const place = roomWaitPlace(ref ? slotQueueLength(ref) : 0, roomQueue, slot);
    enqueue.emit(reply(cmd.reqId, missionQueuedReply(entry, roomQueue.length, undefined, place)));
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
      ...definedFields({ reqId: pass.reqId }),
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
      ...definedFields({ session, runId }),
    });
  }),
};
