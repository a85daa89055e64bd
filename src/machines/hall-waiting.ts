/**
 * Waiting missions by their id, wherever they wait (the wait for room, a
 * slot's queue, a binding's queue): found for a cancel, moved to the front
 * (`queue_front`), dropped with a closed binding.
 */
import type { Mission } from '../domain/mission.js';
import { ownEntry as own } from '../domain/own-entry.js';
import { dropWaits, roomToFront, waitingForRoom } from './hall-admission.js';
import { type BindingRef, type SlotRef, waitingInBinding, waitingInSlot } from './hall-children.js';
import { type EventOf, type HallContext, type HallEnqueue, hallAction } from './hall-context.js';
import { busEffect as bus, droppedEvent, movedEvent, movedReply, replyEffect as reply, storeEffect as store } from './hall-payloads.js';
import type { DropReason } from './slot.machine.js';

/** A waiting mission and the queue actor that holds it (or the hall's own wait for room). */
export interface Waiting {
  entry: Mission;
  queue: { kind: 'slot'; ref: SlotRef } | { kind: 'binding'; ref: BindingRef } | { kind: 'room' };
}

/** Finds a waiting mission by its id in the wait for room and the slot and binding queues (these live in the children). */
export function findWaiting(context: HallContext, missionId: string): Waiting | undefined {
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

/** Drops missions waiting for room (a cancel by id, a closed binding); a passed mission frees its binding. */
export function dropFromRoom(
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

export const waitingActions = {
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

  dropQueued: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.dropQueued'>) => {
    const ref = own(context.bindings, cmd.binding);
    if (ref) enqueue.sendTo(ref, { type: 'binding.drop' });
    dropFromRoom(context, enqueue, { reason: 'binding_closed', binding: cmd.binding });
    for (const slotRef of Object.values(context.slots)) enqueue.sendTo(slotRef, { type: 'slot.drop', binding: cmd.binding });
    if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, { dropped: 1, binding: cmd.binding }));
  }),
};
