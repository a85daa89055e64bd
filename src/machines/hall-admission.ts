/**
 * Admission under `max_running`: the room the hall has for runs, counted in
 * tickets, and the starts that wait for it in order. Pure values only: these
 * functions say which waiting starts go through; the hall machine acts on
 * them (routes, offers, records), so nothing here reaches back into it.
 */
import type { Mission } from '../domain/mission.js';
import { slotOf } from '../domain/names.js';

/**
 * A start that waits for room under `max_running`, in the order it came:
 * a new mission not yet routed, a binding's waiting mission passed on, or a
 * numbered slot's offer of its head.
 */
export type RoomWait =
  | { kind: 'submit'; entry: Mission; at: number }
  | { kind: 'pass'; binding: string; entry: Mission; at: number }
  | { kind: 'offer'; slot: string; entry: Mission; at: number };

export type OfferWait = Extract<RoomWait, { kind: 'offer' }>;

/** The hall's room as its context holds it. */
export interface Room {
  /** How many runs may live at once (`max_running`); absent = no limit. */
  readonly maxRunning?: number | undefined;
  /**
   * Room taken: one per live run and per mission let through towards a
   * start. Given back when such a mission queues instead, or its run ends.
   */
  readonly tickets: number;
  /** Starts waiting for room, oldest first. */
  readonly roomQueue: readonly RoomWait[];
}

/** True when a new start must wait for room: none left, or others wait before it. */
export function roomFull(room: Room): boolean {
  return room.maxRunning !== undefined && (room.tickets >= room.maxRunning || room.roomQueue.length > 0);
}

/** What `makeRoom` decided: the room after it, and the starts it lets through. */
export interface RoomMade {
  tickets: number;
  roomQueue: RoomWait[];
  /** Offers whose slot head was dropped or moved meanwhile: the slot offers its next one (or rests), taking no room. */
  stale: readonly OfferWait[];
  /** The starts let through, oldest first, each with a ticket taken. */
  through: readonly RoomWait[];
}

const NONE: readonly never[] = [];

/**
 * Room was given back (`freed`, after `room.tickets` were counted): lets
 * the starts that wait for it through, oldest first. Nothing starts while
 * the hall stops. `headOf`: the mission a numbered slot would start next.
 */
export function makeRoom(room: Room, params: { freed: number; stopping: boolean }, headOf: (slot: string) => string | undefined): RoomMade {
  let tickets = room.tickets - params.freed;
  // Most run ends find no one waiting: nothing more to build (it is on every run's path).
  if (room.roomQueue.length === 0) return { tickets, roomQueue: [], stale: NONE, through: NONE };
  const roomQueue = [...room.roomQueue];
  const stale: OfferWait[] = [];
  const through: RoomWait[] = [];
  while (!params.stopping && (room.maxRunning === undefined || tickets < room.maxRunning)) {
    const next = roomQueue.shift();
    if (next === undefined) break;
    if (next.kind === 'offer' && headOf(next.slot) !== next.entry.id) {
      stale.push(next);
      continue;
    }
    tickets++;
    through.push(next);
  }
  return { tickets, roomQueue, stale, through };
}

/** Takes the waits that `dropped` names out of the queue (a cancel by id, a closed binding). */
export function dropWaits(
  queue: readonly RoomWait[],
  which: { missionId: string } | { binding: string },
): { roomQueue: RoomWait[]; dropped: Exclude<RoomWait, OfferWait>[] } {
  const dropped: Exclude<RoomWait, OfferWait>[] = [];
  const roomQueue: RoomWait[] = [];
  for (const w of queue) {
    if (w.kind !== 'offer' && ('missionId' in which ? w.entry.id === which.missionId : w.entry.binding === which.binding)) dropped.push(w);
    else roomQueue.push(w);
  }
  return { roomQueue, dropped };
}

/**
 * The place of a mission that waits for room, as its slot's queue is stored
 * and `queue` numbers it: after the `held` missions of its slot's own queue
 * and the starts of its slot that wait for room before it (`queue` ends
 * with it). Not its place in the wait for room, which counts every slot's.
 */
export function roomWaitPlace(held: number, queue: readonly RoomWait[], slot: string): number {
  let place = held;
  for (const wait of queue) if (wait.kind === 'submit' && slotOf(wait.entry.name).slot === slot) place++;
  return place;
}

/** The mission `missionId` if it waits for room itself (an offer's mission waits in its slot). */
export function waitingForRoom(queue: readonly RoomWait[], missionId: string): Mission | undefined {
  return queue.find((w) => w.kind !== 'offer' && w.entry.id === missionId)?.entry;
}

/**
 * A mission waiting for room moved to the front of its slot's queue: before
 * the first mission of its slot that waits for room, as its slot's queue is
 * stored (a binding's mission passed on is its binding's head already).
 * `from`: its place among them before (1: no change).
 */
export function roomToFront(queue: readonly RoomWait[], missionId: string): { roomQueue: RoomWait[]; from: number } {
  const i = queue.findIndex((w) => w.kind !== 'offer' && w.entry.id === missionId);
  const wait = queue[i];
  if (wait === undefined || wait.kind !== 'submit') return { roomQueue: [...queue], from: 1 };
  const slot = slotOf(wait.entry.name).slot;
  const sameQueue = (w: RoomWait) => w.kind === 'submit' && slotOf(w.entry.name).slot === slot;
  const first = queue.findIndex(sameQueue);
  const from = queue.slice(0, i + 1).filter(sameQueue).length;
  const roomQueue = queue.filter((_, j) => j !== i);
  roomQueue.splice(first, 0, wait);
  return { roomQueue, from };
}
