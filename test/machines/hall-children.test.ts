// The hall reads its children's queues from their snapshots (src/machines/hall-children.ts).
// Those reads are exact because an idle child takes an event before the send returns:
// these tests pin that, through the accessors the hall uses.
import { describe, expect, it } from 'vitest';
import { slotHeadId, slotWaitingPlace, waitingInBinding, waitingInSlot } from '../../src/machines/hall-children.js';
import { startHall } from './hall-harness.js';

describe("the hall's reads of its children", () => {
  it("a slot's queue, read right after a send to it, already holds what was sent", async () => {
    const h = startHall();
    h.boot();
    h.spawn('1bjorn', 'first');
    await h.settle();
    const slot = h.hall.getSnapshot().context.slots['1bjorn'];
    if (!slot) throw new Error('no slot actor for 1bjorn');
    await h.complete('first');
    // An idle slot would start a new mission: it has no waiting place to offer.
    expect(slotWaitingPlace(slot)).toBeUndefined();
    h.spawn('1bjorn', 'a');
    expect(slotWaitingPlace(slot)).toBe(1);
    expect(slotHeadId(slot)).toBeUndefined();
    slot.send({ type: 'slot.hold', entry: { id: 'x1', mission: 'held', name: '1bjorn' }, at: h.clock.now() });
    expect(slotWaitingPlace(slot)).toBe(2);
    expect(slotHeadId(slot)).toBe('x1');
    expect(waitingInSlot(slot, 'x1')?.mission).toBe('held');
    // Through the hall: each spawn reads the place the previous one took, with no settling between them.
    const r1 = h.spawn('1bjorn', 'b');
    const r2 = h.spawn('1bjorn', 'c');
    expect(h.reply(r1)?.body).toMatchObject({ queued: 1, queue_depth: 2 });
    expect(h.reply(r2)?.body).toMatchObject({ queued: 1, queue_depth: 3 });
    expect(slotWaitingPlace(slot)).toBe(4);
    expect(h.errors).toEqual([]);
  });

  it("a binding's queue, read right after a spawn for it, holds the mission", async () => {
    const h = startHall();
    h.boot();
    h.spawn('bjorn', 'a', { binding: 'chat' });
    await h.settle();
    h.spawn('bjorn', 'b', { binding: 'chat' });
    const binding = h.hall.getSnapshot().context.bindings.chat;
    if (!binding) throw new Error('no binding actor for chat');
    expect(waitingInBinding(binding, 'm2')?.mission).toBe('b');
    expect(waitingInBinding(binding, 'm1')).toBeUndefined();
    expect(h.errors).toEqual([]);
  });
});
