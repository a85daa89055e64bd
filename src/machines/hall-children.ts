/**
 * What the hall reads of its children's queues and of their live runs, the
 * only places it reads a child's snapshot rather than hearing a report.
 *
 * The invariant these reads rely on: a child has taken every event sent to
 * it from outside its own step by the time the send returns (an idle
 * actor's mailbox is drained synchronously), so on a command from outside
 * the tree (spawn, cancel, queue_front) the hall reads the child's state
 * after everything it sent the child before. On a report a child sends
 * from inside its own step (`slot.offer`, `binding.offerAccepted`), events
 * the hall sent that child in the same chain may still wait in its mailbox:
 * what is read there is checked again where it is acted on (an offer whose
 * head moved meanwhile takes no room). test/machines/hall-children.test.ts
 * pins the synchronous delivery.
 */
import type { ActorRefFrom } from 'xstate';
import type { Mission } from '../domain/mission.js';
import type { bindingQueueMachine } from './binding-queue.machine.js';
import { type slotMachine, waitingPlace } from './slot.machine.js';

export type SlotRef = ActorRefFrom<typeof slotMachine>;
export type BindingRef = ActorRefFrom<typeof bindingQueueMachine>;

/** The mission a slot would start next (the head of its queue), if any. */
export function slotHeadId(ref: SlotRef): string | undefined {
  return ref.getSnapshot().context.queue.head?.id;
}

/** The place a new mission would take in the slot's queue, if the slot is busy (see `waitingPlace`). */
export function slotWaitingPlace(ref: SlotRef): number | undefined {
  return waitingPlace(ref.getSnapshot());
}

/** How many missions wait in the slot's own queue (a numbered slot's; an offered head among them). */
export function slotQueueLength(ref: SlotRef): number {
  return ref.getSnapshot().context.queue.length;
}

/**
 * Whether any slot has a live run (one it created or adopted and has not
 * seen end). Read by the stopping hall after each of its steps: a slot adds a
 * run in the step that creates it and drops it in the step that sends its
 * end to the hall, so a run is never missing here while it lives.
 */
export function anySlotHasRuns(slots: Readonly<Record<string, SlotRef>>): boolean {
  for (const ref of Object.values(slots)) if (ref.getSnapshot().context.active.length > 0) return true;
  return false;
}

/** The mission `missionId` if it waits in this slot's queue. */
export function waitingInSlot(ref: SlotRef, missionId: string): Mission | undefined {
  return ref.getSnapshot().context.queue.find(missionId);
}

/** The mission `missionId` if it waits in this binding's queue. */
export function waitingInBinding(ref: BindingRef, missionId: string): Mission | undefined {
  return ref.getSnapshot().context.queue.find(missionId);
}
