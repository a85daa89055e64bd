/**
 * What waits, from the durable state: the slot queues, then the binding
 * queues, each in the order its missions will start. `queue` lists them;
 * `status` names their ids.
 */
import { missionTakenAt, type Mission } from '../../domain/mission.js';
import type { Answer } from '../../protocol/replies.js';
import type { DurableState } from '../../ports/durable-state.js';
import { definedFields } from '../../domain/defined-fields.js';

export type WaitingQueue = Answer<'queue'>['queues'][number];

/** Seconds to a tenth, never negative. */
export function ageSeconds(now: number, since: number): number {
  return Math.max(0, Math.round((now - since) / 100) / 10);
}

function waiting(missions: readonly Mission[], now: number) {
  return missions.map((m, i) => {
    const takenAt = missionTakenAt(m.id);
    return {
      mission_id: m.id,
      position: i + 1,
      name: m.name,
      mission: m.mission,
      ...definedFields({ binding: m.binding }),
      ...(takenAt !== undefined ? { age: ageSeconds(now, takenAt) } : {}),
    };
  });
}

const byKey = <T>(entries: Iterable<[string, T]>): [string, T][] => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * Every non-empty queue; with `only`, the queues of that slot or binding and
 * the missions of that raider name that wait for their binding.
 */
export function waitingQueues(state: Pick<DurableState, 'slotQueues' | 'bindingQueues'>, now: number, only?: string): WaitingQueue[] {
  const queues: WaitingQueue[] = [];
  for (const [slot, missions] of byKey(state.slotQueues)) {
    if (missions.length === 0 || (only !== undefined && only !== slot)) continue;
    queues.push({ slot, missions: waiting(missions, now) });
  }
  for (const [binding, missions] of byKey(state.bindingQueues)) {
    if (missions.length === 0) continue;
    const listed = waiting(missions, now).filter((m) => only === undefined || only === binding || only === m.name);
    if (listed.length > 0) queues.push({ binding, missions: listed });
  }
  return queues;
}

export type WaitingId = NonNullable<Answer<'status'>['waiting']>[number];

/**
 * Every waiting mission by id, for `status`: the slot queues, then the
 * binding queues, as `waitingQueues` orders them. Built straight from the
 * queues with the keys in sorted order, so a reply naming 100,000 missions
 * is written by the native JSON writer (protocol/canonical-json.ts).
 */
export function waitingIds(state: Pick<DurableState, 'slotQueues' | 'bindingQueues'>): WaitingId[] {
  const out: WaitingId[] = [];
  for (const [, missions] of byKey(state.slotQueues)) {
    for (let i = 0; i < missions.length; i++) {
      const m = missions[i];
      if (m) out.push({ mission_id: m.id, position: i + 1, slot: m.name });
    }
  }
  for (const [binding, missions] of byKey(state.bindingQueues)) {
    for (let i = 0; i < missions.length; i++) {
      const m = missions[i];
      if (m) out.push({ binding, mission_id: m.id, position: i + 1, slot: m.name });
    }
  }
  return out;
}
