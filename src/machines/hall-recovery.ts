/**
 * Boot recovery: the hall takes up what a previous hall left (adopted runs,
 * waiting missions, runs that ended while no hall watched), before any new
 * mission may overtake them.
 */
import type { Mission } from '../domain/mission.js';
import { slotOf } from '../domain/names.js';
import type { RoomWait } from './hall-admission.js';
import { bindingRefOf, hallAction, slotRefOf } from './hall-context.js';
import { busEffect as bus, endEvents, endOps, storeEffect as store } from './hall-payloads.js';
import { letThrough } from './hall-routing.js';

export const recoveryActions = {
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
    enqueue.assign({ tickets: context.tickets + context.adopted.length });
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
      for (const event of endEvents(run)) enqueue.emit(bus(event));
      for (const op of endOps(run)) enqueue.emit(store(op));
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
};
