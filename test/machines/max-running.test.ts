// max_running: a hall runs at most N raiders at once. A mission over the
// limit waits (recorded in its slot's queue), in order with every other start
// that waits for room, and starts when a run ends; it never overtakes one
// waiting before it, whether that one waits for room, its numbered slot or its binding.
import { describe, expect, it } from 'vitest';
import { expectMoved, startHall } from './hall-harness.js';

describe('max_running (hall machine, simulated time)', () => {
  it('starts at most N runs; the others wait in order and start as runs end', async () => {
    const h = startHall({ maxRunning: 2 });
    h.boot();
    h.spawn('bjorn', 'a');
    h.spawn('bjorn', 'b');
    const r3 = h.spawn('bjorn', 'c');
    const r4 = h.spawn('ulf', 'd');
    await h.settle();
    expect(h.started()).toEqual(['a', 'b']);
    expect(h.reply(r3)?.body).toEqual({ queued: 1, slot: 'bjorn', queue_depth: 1, position: 1, mission_id: 'm3' });
    // Second to wait for room, first in ulf's queue: `queue` numbers it 1.
    expect(h.reply(r4)?.body).toEqual({ queued: 1, slot: 'ulf', queue_depth: 2, position: 1, mission_id: 'm4' });
    // Recorded as waiting in their slots' queues, so a restart finds them.
    expect(h.storeOps().filter((op) => op.op === 'queue')).toEqual([
      { op: 'queue', queue: { kind: 'slot', slot: 'bjorn' }, entry: { id: 'm3', name: 'bjorn', mission: 'c' } },
      { op: 'queue', queue: { kind: 'slot', slot: 'ulf' }, entry: { id: 'm4', name: 'ulf', mission: 'd' } },
    ]);
    await h.complete('a');
    expect(h.started()).toEqual(['a', 'b', 'c']);
    h.spawn('bjorn', 'e');
    await h.complete('b');
    expect(h.started()).toEqual(['a', 'b', 'c', 'd']);
    await h.complete('c');
    await h.complete('d');
    await h.complete('e');
    expect(h.started()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(h.bus('raider.done')).toHaveLength(5);
    expect(h.hall.getSnapshot().context.tickets).toBe(0);
    expect(h.errors).toEqual([]);
  });

  it('keeps FIFO across a numbered slot, a binding and the wait for room', async () => {
    const h = startHall({ maxRunning: 1 });
    h.boot();
    h.spawn('1bjorn', 'a');
    h.spawn('ulf', 'b');
    h.spawn('1bjorn', 'c');
    h.spawn('ulf', 'd', { binding: 'telegram:ops:1' });
    h.spawn('ulf', 'e', { binding: 'telegram:ops:1' });
    await h.settle();
    expect(h.started()).toEqual(['a']);
    for (const m of ['a', 'b', 'c', 'd']) await h.complete(m);
    expect(h.started()).toEqual(['a', 'b', 'c', 'd', 'e']);
    await h.complete('e');
    expect(h.hall.getSnapshot().context.tickets).toBe(0);
    expect(h.errors).toEqual([]);
  });

  it('a mission waiting for room can be cancelled by its id', async () => {
    const h = startHall({ maxRunning: 1 });
    h.boot();
    h.spawn('bjorn', 'a');
    h.spawn('bjorn', 'b');
    h.spawn('bjorn', 'c');
    await h.settle();
    h.hall.send({ type: 'cmd.cancel', reqId: 'x', id: 'm2' });
    await h.settle();
    expect(h.reply('x')?.body).toEqual({ dropped: 1, mission_id: 'm2', slot: 'bjorn' });
    expect(h.bus('raider.dropped')).toEqual([{ type: 'raider.dropped', mission_id: 'm2', slot: 'bjorn', reason: 'cancelled' }]);
    // The durable queue forgets it too: a restart must not bring it back.
    expect(h.storeOps().filter((op) => op.op === 'remove')).toEqual([{ op: 'remove', missionId: 'm2' }]);
    await h.complete('a');
    expect(h.started()).toEqual(['a', 'c']);
    expect(h.errors).toEqual([]);
  });

  it('a mission waiting for room moves to the front of its slot: it starts before the others of its slot, in their place', async () => {
    const h = startHall({ maxRunning: 1 });
    h.boot();
    h.spawn('bjorn', 'a');
    h.spawn('bjorn', 'b');
    h.spawn('ulf', 'c');
    h.spawn('bjorn', 'd');
    await h.settle();
    h.hall.send({ type: 'cmd.queueFront', reqId: 'f1', id: 'm4' });
    await h.settle();
    // Its place among the missions of its slot that wait for room, as the slot's stored queue holds them.
    expectMoved(h, 'f1', { mission_id: 'm4', slot: 'bjorn', position: 1, from: 2 });
    // It takes the place of the first of its slot (b), which came before c.
    for (const m of ['a', 'd', 'b', 'c']) await h.complete(m);
    expect(h.started()).toEqual(['a', 'd', 'b', 'c']);
    expect(h.hall.getSnapshot().context.tickets).toBe(0);
    expect(h.errors).toEqual([]);
  });

  it('missions a previous hall left waiting for room wait for it again, in order', async () => {
    const h = startHall({
      maxRunning: 1,
      slotQueues: {
        bjorn: [
          { id: 'old1', name: 'bjorn', mission: 'old-1' },
          { id: 'old2', name: 'bjorn', mission: 'old-2' },
        ],
      },
    });
    h.boot();
    h.spawn('bjorn', 'new');
    await h.settle();
    expect(h.started()).toEqual(['old-1']);
    await h.complete('old-1');
    await h.complete('old-2');
    expect(h.started()).toEqual(['old-1', 'old-2', 'new']);
    expect(h.errors).toEqual([]);
  });

  it('without max_running nothing waits for room', async () => {
    const h = startHall();
    h.boot();
    for (const m of ['a', 'b', 'c', 'd']) h.spawn('bjorn', m);
    await h.settle();
    expect(h.started()).toEqual(['a', 'b', 'c', 'd']);
    expect(h.bus('raider.queued')).toEqual([]);
  });

  it("drop_queued drops a binding's missions that wait for room, whether they came straight in or through the binding's queue, and frees the binding", async () => {
    const h = startHall({ maxRunning: 2 });
    h.boot();
    h.spawn('ulf', 'b1', { binding: 'acp:a' });
    h.spawn('ulf', 'b2', { binding: 'acp:a' });
    h.spawn('bjorn', 'x');
    h.spawn('bjorn', 'y');
    await h.settle();
    expect(h.started()).toEqual(['b1', 'x']);
    // b1's end lets y (waiting for room) through first; the binding then passes b2 on, and b2 waits for room.
    await h.complete('b1');
    expect(h.started()).toEqual(['b1', 'x', 'y']);
    h.spawn('ulf', 'b3', { binding: 'acp:a' });
    h.spawn('ulf', 'b4', { binding: 'acp:b' });
    await h.settle();
    expect(h.hall.getSnapshot().context.roomQueue.map((w) => [w.kind, w.entry.mission])).toEqual([
      ['pass', 'b2'],
      ['submit', 'b3'],
      ['submit', 'b4'],
    ]);

    h.hall.send({ type: 'cmd.dropQueued', reqId: 'drop', binding: 'acp:a' });
    await h.settle();
    expect(h.reply('drop')?.body).toEqual({ dropped: 1, binding: 'acp:a' });
    expect(h.bus('raider.dropped').map((e) => [e.mission_id, e.reason])).toEqual([
      ['m2', 'binding_closed'],
      ['m5', 'binding_closed'],
    ]);
    expect(h.storeOps().filter((op) => op.op === 'remove')).toEqual([
      { op: 'remove', missionId: 'm2' },
      { op: 'remove', missionId: 'm5' },
    ]);
    expect(h.hall.getSnapshot().context.roomQueue.map((w) => w.entry.mission)).toEqual(['b4']);

    // The binding is free again: a new mission of it starts when room comes, after b4.
    h.spawn('ulf', 'b5', { binding: 'acp:a' });
    await h.complete('x');
    await h.complete('y');
    expect(h.started()).toEqual(['b1', 'x', 'y', 'b4', 'b5']);
    await h.complete('b4');
    await h.complete('b5');
    expect(h.hall.getSnapshot().context.tickets).toBe(0);
    expect(h.errors).toEqual([]);
  });
});
