/**
 * A FIFO queue of waiting missions that is a value: every change returns a
 * new queue and leaves the old one as it was, so a machine can keep it in its
 * context. Adding at the tail and taking the head cost O(1) (amortised), not
 * a copy of the queue: a slot with 100,000 waiting missions copied them all
 * on every spawn when its queue was a plain array.
 *
 * Versions share one backing array. A version may append to it in place only
 * when its own end is the array's end (it is the newest version along that
 * line); an older version that appends copies its part first. What a version
 * sees, `items[start, start + length)`, is never written again.
 */
import type { Mission } from './mission.js';

/** Dead heads are dropped from the backing array once there are this many and they are most of it. */
const COMPACT_AFTER = 1024;

export class MissionQueue implements Iterable<Mission> {
  static readonly empty = new MissionQueue([], 0, 0);

  private constructor(
    private readonly items: Mission[],
    private readonly start: number,
    readonly length: number,
  ) {}

  /** A queue of these missions, oldest first (the array is copied). */
  static of(missions: Iterable<Mission>): MissionQueue {
    const items = [...missions];
    return items.length === 0 ? MissionQueue.empty : new MissionQueue(items, 0, items.length);
  }

  get head(): Mission | undefined {
    return this.length > 0 ? this.items[this.start] : undefined;
  }

  /** The queue with `mission` at its tail. */
  push(mission: Mission): MissionQueue {
    const end = this.start + this.length;
    if (end === this.items.length && this.items !== MissionQueue.empty.items) {
      this.items.push(mission);
      return new MissionQueue(this.items, this.start, this.length + 1);
    }
    const items = this.items.slice(this.start, end);
    items.push(mission);
    return new MissionQueue(items, 0, items.length);
  }

  /** The queue without its head. */
  shift(): MissionQueue {
    if (this.length <= 1) return MissionQueue.empty;
    const start = this.start + 1;
    if (start >= COMPACT_AFTER && start * 2 >= this.items.length) {
      const items = this.items.slice(start, start + this.length - 1);
      return new MissionQueue(items, 0, items.length);
    }
    return new MissionQueue(this.items, start, this.length - 1);
  }

  /** The place (0 first) of the mission with this id, -1 when it does not wait here; the head is found at once. */
  indexOf(missionId: string): number {
    for (let i = 0; i < this.length; i++) if (this.items[this.start + i]?.id === missionId) return i;
    return -1;
  }

  /** The waiting mission with this id, if there is one. */
  find(missionId: string): Mission | undefined {
    const i = this.indexOf(missionId);
    return i < 0 ? undefined : this.items[this.start + i];
  }

  /** The queue without the mission of this id (the head costs O(1), any other a copy). */
  without(missionId: string): MissionQueue {
    const i = this.indexOf(missionId);
    if (i < 0) return this;
    if (i === 0) return this.shift();
    return MissionQueue.of(this.toArray().filter((_, j) => j !== i));
  }

  /** Every mission, oldest first, as a new array. */
  toArray(): Mission[] {
    return this.items.slice(this.start, this.start + this.length);
  }

  *[Symbol.iterator](): Iterator<Mission> {
    for (let i = 0; i < this.length; i++) {
      const mission = this.items[this.start + i];
      if (mission !== undefined) yield mission;
    }
  }
}
