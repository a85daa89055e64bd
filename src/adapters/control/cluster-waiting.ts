/**
 * `queue` and `status` of a hall of a shared cluster: what waits is the
 * cluster's, in the database, not this hall's (a submitted mission goes to
 * the cluster's queue whichever hall took it). Each mission a hall has
 * claimed and is starting names that hall.
 */
import type { Mission } from '../../domain/mission.js';
import type { Answer, ReplyTo } from '../../protocol/replies.js';
import type { QueuedMission } from '../../ports/cluster-queue.js';
import type { DurableState } from '../../ports/durable-state.js';
import { waitingQueues, type WaitingQueue } from './waiting-missions.js';
import { definedFields } from '../../domain/defined-fields.js';

type Queues = Pick<DurableState, 'slotQueues' | 'bindingQueues'>;

/** The cluster's queues, with what waits in this hall's own memory (a mission on its way to a start) after them. */
function merged(local: Queues, queued: readonly QueuedMission[]): { queues: Queues; halls: Map<string, string> } {
  const slotQueues = new Map<string, Mission[]>();
  const bindingQueues = new Map<string, Mission[]>();
  const halls = new Map<string, string>();
  const add = (map: Map<string, Mission[]>, key: string, entry: Mission) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [entry]);
    else list.push(entry);
  };
  for (const { queue, entry, hall } of queued) {
    if (queue.kind === 'slot') add(slotQueues, queue.slot, entry);
    else add(bindingQueues, queue.binding, entry);
    if (hall !== null) halls.set(entry.id, hall);
  }
  const listed = new Set(queued.map((q) => q.entry.id));
  for (const [source, target] of [
    [local.slotQueues, slotQueues],
    [local.bindingQueues, bindingQueues],
  ] as const) {
    for (const [key, missions] of source) for (const m of missions) if (!listed.has(m.id)) add(target, key, m);
  }
  return { queues: { slotQueues, bindingQueues }, halls };
}

function withHalls(queues: WaitingQueue[], halls: ReadonlyMap<string, string>): WaitingQueue[] {
  return queues.map((q) => ({
    ...q,
    missions: q.missions.map((m) => {
      const hall = halls.get(m.mission_id);
      return hall !== undefined ? { ...m, hall } : m;
    }),
  }));
}

/** `queue` on a shared hall: the cluster's queues, in the order their missions start. */
export function clusterQueue(local: Queues, queued: readonly QueuedMission[], now: number, only?: string): ReplyTo<'queue'> {
  const { queues, halls } = merged(local, queued);
  return { queues: withHalls(waitingQueues(queues, now, only), halls) };
}

/** `status` on a shared hall: this hall's runs, and the cluster's waiting missions in place of its own. */
export function clusterStatus(status: Answer<'status'>, local: Queues, queued: readonly QueuedMission[], now: number): Answer<'status'> {
  const { queues, halls } = merged(local, queued);
  const slotCounts: Record<string, number> = { ...status.queues };
  for (const [slot, missions] of queues.slotQueues) slotCounts[slot] = missions.length;
  const bindingCounts: Record<string, number> = {};
  for (const [binding, missions] of queues.bindingQueues) if (missions.length > 0) bindingCounts[binding] = missions.length;
  const waiting = withHalls(waitingQueues(queues, now), halls).flatMap((q) =>
    q.missions.map((m) => ({
      mission_id: m.mission_id,
      slot: m.name,
      ...definedFields({ binding: q.binding }),
      position: m.position,
      ...definedFields({ hall: m.hall }),
    })),
  );
  const { waiting: _own, ...rest } = status;
  return { ...rest, queues: slotCounts, binding_queues: bindingCounts, ...(waiting.length > 0 ? { waiting } : {}) };
}
