// Admission under max_running as pure values: makeRoom says which waiting
// starts go through, the hall machine acts on them (test/machines/max-running.test.ts).
import { describe, expect, it } from 'vitest';
import type { Mission } from '../../src/domain/mission.js';
import {
  dropWaits,
  makeRoom,
  type RoomWait,
  roomFull,
  roomToFront,
  roomWaitPlace,
  waitingForRoom,
} from '../../src/machines/hall-admission.js';

const mission = (id: string, name = 'bjorn', binding?: string): Mission => ({ id, mission: id, name, ...(binding ? { binding } : {}) });
const submit = (id: string, name?: string, binding?: string): RoomWait => ({ kind: 'submit', entry: mission(id, name, binding), at: 0 });
const offer = (id: string, slot: string): RoomWait => ({ kind: 'offer', slot, entry: mission(id, slot), at: 0 });
const pass = (id: string, binding: string): RoomWait => ({ kind: 'pass', binding, entry: mission(id, 'bjorn', binding), at: 0 });
const noHead = () => undefined;

describe('hall admission (max_running)', () => {
  it('a start waits when no room is left, or when others wait before it', () => {
    expect(roomFull({ tickets: 9, roomQueue: [] })).toBe(false);
    expect(roomFull({ maxRunning: 2, tickets: 1, roomQueue: [] })).toBe(false);
    expect(roomFull({ maxRunning: 2, tickets: 2, roomQueue: [] })).toBe(true);
    expect(roomFull({ maxRunning: 2, tickets: 0, roomQueue: [submit('m1')] })).toBe(true);
  });

  it('lets the oldest waiting starts through while room lasts, one ticket each', () => {
    const made = makeRoom(
      { maxRunning: 2, tickets: 2, roomQueue: [submit('m1'), pass('m2', 'chat'), submit('m3')] },
      { freed: 1, stopping: false },
      noHead,
    );
    expect(made.through.map((w) => w.entry.id)).toEqual(['m1']);
    expect(made.roomQueue.map((w) => w.entry.id)).toEqual(['m2', 'm3']);
    expect(made.tickets).toBe(2);
    expect(made.stale).toEqual([]);
  });

  it('with no limit every waiting start goes through', () => {
    const made = makeRoom({ tickets: 0, roomQueue: [submit('m1'), submit('m2')] }, { freed: 0, stopping: false }, noHead);
    expect(made.through.map((w) => w.entry.id)).toEqual(['m1', 'm2']);
    expect(made).toMatchObject({ tickets: 2, roomQueue: [] });
  });

  it('an offer whose slot head moved meanwhile takes no room: it is told back as stale, and the next start goes through', () => {
    const heads: Record<string, string> = { '1ulf': 'm9' };
    const made = makeRoom(
      { maxRunning: 1, tickets: 1, roomQueue: [offer('m1', '1ulf'), submit('m2')] },
      { freed: 1, stopping: false },
      (slot) => heads[slot],
    );
    expect(made.stale.map((w) => w.entry.id)).toEqual(['m1']);
    expect(made.through.map((w) => w.entry.id)).toEqual(['m2']);
    expect(made.tickets).toBe(1);
  });

  it('lets nothing through while the hall stops; the room freed is still given back', () => {
    const made = makeRoom({ maxRunning: 1, tickets: 1, roomQueue: [submit('m1')] }, { freed: 1, stopping: true }, noHead);
    expect(made).toEqual({ tickets: 0, roomQueue: [submit('m1')], stale: [], through: [] });
  });

  it('drops waits by mission id or by binding, never an offer (its mission waits in its slot)', () => {
    const queue = [submit('m1', 'bjorn', 'chat'), offer('m2', '1ulf'), pass('m3', 'chat'), submit('m4')];
    expect(dropWaits(queue, { binding: 'chat' }).dropped.map((w) => w.entry.id)).toEqual(['m1', 'm3']);
    expect(dropWaits(queue, { binding: 'chat' }).roomQueue.map((w) => w.entry.id)).toEqual(['m2', 'm4']);
    expect(dropWaits(queue, { missionId: 'm2' }).dropped).toEqual([]);
    expect(waitingForRoom(queue, 'm2')).toBeUndefined();
    expect(waitingForRoom(queue, 'm4')?.id).toBe('m4');
  });

  it('moves a waiting submit before the first of its slot, and says where it was', () => {
    const queue = [submit('m1', 'bjorn'), submit('m2', 'ulf'), submit('m3', 'bjorn')];
    const { roomQueue, from } = roomToFront(queue, 'm3');
    expect(roomQueue.map((w) => w.entry.id)).toEqual(['m3', 'm1', 'm2']);
    expect(from).toBe(2);
    expect(roomToFront(queue, 'm1').from).toBe(1);
  });

  it("numbers a new wait for room within its slot's queue: after what the slot holds and its slot's earlier waits", () => {
    // 1ivar holds two (its offered head among them); an offer and a pass wait in the slot or binding already.
    const queue = [submit('m1', '1ivar'), offer('m0', '1ivar'), submit('m2', 'ulf'), pass('m5', 'cron:x'), submit('m3', '1ivar')];
    expect(roomWaitPlace(2, queue, '1ivar')).toBe(4);
    expect(roomWaitPlace(0, queue.slice(0, 3), 'ulf')).toBe(1);
  });
});
