/**
 * `queue_front`: an operator moves a waiting mission to the front of its
 * slot or binding queue; it starts next, the move is one durable operation
 * and one `raider.moved` event.
 */
import { describe, expect, it } from 'vitest';
import { DurableState, noDirt } from '../../src/ports/durable-state.js';
import { toFront } from '../../src/domain/mission.js';
import { expectMoved, startHall } from './hall-harness.js';

const front = (h: ReturnType<typeof startHall>, id: string, reqId: string) => h.hall.send({ type: 'cmd.queueFront', reqId, id });

describe('queue_front through the hall (simulated time)', () => {
  it('moves a mission of a numbered slot first: it starts next, the others keep their order', async () => {
    const h = startHall();
    h.boot();
    for (const m of ['a', 'b', 'c', 'd']) h.spawn('1bjorn', m);
    await h.settle();
    front(h, 'm4', 'f1');
    await h.settle();
    expectMoved(h, 'f1', { mission_id: 'm4', slot: '1bjorn', position: 1, from: 3 });
    for (const mission of ['a', 'd', 'b', 'c']) await h.complete(mission);
    expect(h.started()).toEqual(['a', 'd', 'b', 'c']);
    expect(h.errors).toEqual([]);
  });

  it('the head stays where it is: a reply, no event, nothing to record', async () => {
    const h = startHall();
    h.boot();
    h.spawn('1bjorn', 'a');
    h.spawn('1bjorn', 'b');
    await h.settle();
    front(h, 'm2', 'f1');
    await h.settle();
    expect(h.reply('f1')?.body).toMatchObject({ moved: 1, position: 1, from: 1 });
    expect(h.bus('raider.moved')).toEqual([]);
    expect(h.storeOps().filter((op) => op.op === 'front')).toEqual([]);
  });

  it('moves a mission in a binding queue', async () => {
    const h = startHall();
    h.boot();
    h.spawn('bjorn', 'first', { binding: 'cron:x' });
    h.spawn('bjorn', 'second', { binding: 'cron:x' });
    h.spawn('bjorn', 'third', { binding: 'cron:x' });
    await h.settle();
    front(h, 'm3', 'f1');
    await h.settle();
    expect(h.reply('f1')?.body).toEqual({ moved: 1, mission_id: 'm3', slot: 'bjorn', binding: 'cron:x', position: 1, from: 2 });
    expect(h.bus('raider.moved')).toEqual([
      { type: 'raider.moved', mission_id: 'm3', slot: 'bjorn', binding: 'cron:x', position: 1, from: 2 },
    ]);
    await h.complete('first');
    await h.complete('third');
    expect(h.started()).toEqual(['first', 'third', 'second']);
  });

  it('refuses what does not wait (a running run, an unknown id) with a message naming `queue`', async () => {
    const h = startHall();
    h.boot();
    h.spawn('1bjorn', 'a');
    await h.settle();
    front(h, 'm1', 'f1');
    front(h, 'nope', 'f2');
    await h.settle();
    for (const reqId of ['f1', 'f2'])
      expect(h.reply(reqId)?.body).toEqual({ error: expect.stringMatching(/no waiting mission .*raider hall queue/) });
  });
});

describe('the front operation on the durable state', () => {
  it('moves the mission first in its queue, idempotently, and ignores one that no longer waits', () => {
    const state = new DurableState();
    const dirty = noDirt();
    for (const id of ['a', 'b', 'c'])
      state.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: { id, name: '1bjorn', mission: id } }, dirty);
    const fresh = noDirt();
    state.apply({ op: 'front', missionId: 'c' }, fresh);
    expect(fresh.slots.has('1bjorn')).toBe(true);
    state.apply({ op: 'front', missionId: 'c' }, noDirt());
    state.apply({ op: 'front', missionId: 'gone' }, noDirt());
    expect(state.slotQueues.get('1bjorn')?.map((m) => m.id)).toEqual(['c', 'a', 'b']);
    state.apply({ op: 'remove', missionId: 'c' }, noDirt());
    state.apply({ op: 'front', missionId: 'b' }, noDirt());
    expect(state.slotQueues.get('1bjorn')?.map((m) => m.id)).toEqual(['b', 'a']);
  });

  it('toFront keeps the others in order and says where the mission was', () => {
    const q = ['a', 'b', 'c'].map((id) => ({ id, name: 'x', mission: id }));
    expect(toFront(q, 'b')).toMatchObject({ from: 2, queue: [{ id: 'b' }, { id: 'a' }, { id: 'c' }] });
    expect(toFront(q, 'z').entry).toBeUndefined();
  });
});
