/**
 * A binding's queue: one writer per session (docs/architecture.md, the offer protocol). While a run of the
 * binding lives, or a mission of it is on its way to a slot, new missions of
 * the binding wait here, and start one after the other in the binding's
 * session.
 *
 *   free ──submit/offer──▶ reserved ──started──▶ occupied ──ended──▶ (next or free)
 *                              └──waiting (it queued in a busy slot)──▶ (next or free)
 */
import { assign, enqueueActions, sendParent, setup } from 'xstate';
import { toFront, type Mission } from '../domain/mission.js';
import { MissionQueue } from '../domain/mission-queue.js';
import type { DropReason } from './slot.machine.js';
import { definedFields } from '../domain/defined-fields.js';

export interface BindingQueueInput {
  binding: string;
  /** Missions left waiting by a previous hall, oldest first. */
  queue: Mission[];
}

export interface BindingQueueContext extends Omit<BindingQueueInput, 'queue'> {
  /** The waiting missions, oldest first (mission-queue.ts: O(1) push and shift). */
  queue: MissionQueue;
  /** The run that holds the binding. */
  runId?: string;
  /** Time of the latest event, passed on with the next mission. */
  now: number;
  stopping: boolean;
}

export type BindingQueueEvent =
  /** A new mission of this binding. */
  | { type: 'binding.submit'; entry: Mission; at: number; reqId?: string }
  /** A slot wants to start a waiting mission of this binding. */
  | { type: 'binding.offer'; entry: Mission; slot: string; at: number }
  /** A run of the binding was created. */
  | { type: 'binding.started'; runId: string }
  /** The mission passed on had to wait in its slot's queue: the binding is free again. */
  | { type: 'binding.waiting'; at: number }
  /** The run that held the binding ended. */
  | { type: 'binding.ended'; runId: string; at: number }
  | { type: 'binding.drain'; at: number }
  | { type: 'binding.drop' }
  /** Drops one waiting mission (a cancel by its id). */
  | { type: 'binding.dropMission'; missionId: string; reason: DropReason }
  /** Moves one waiting mission to the head of the queue (an operator's `queue_front`). */
  | { type: 'binding.frontMission'; missionId: string; reqId?: string }
  | { type: 'binding.stop' };

/** What a binding queue tells the hall. */
export type BindingQueueReport =
  /** `waited`: the mission had waited in this queue (it is reported as queued if refused). */
  | { type: 'binding.pass'; binding: string; entry: Mission; at: number; reqId?: string; waited?: true }
  | { type: 'binding.queued'; binding: string; entry: Mission; depth: number; reqId?: string; fromSlot?: string }
  | { type: 'binding.offerAccepted'; binding: string; slot: string; missionId: string; at: number }
  | { type: 'binding.dropped'; binding: string; entries: Mission[]; reason: DropReason }
  /** `from`: the mission's place before the move (1 first); absent when it no longer waited. */
  | { type: 'binding.moved'; binding: string; missionId: string; entry?: Mission; from?: number; reqId?: string };

/** The event of one type: what an action with typed params is given. */
type EventOf<T extends BindingQueueEvent['type']> = Extract<BindingQueueEvent, { type: T }>;

export const bindingQueueMachine = setup({
  types: {} as { context: BindingQueueContext; input: BindingQueueInput; events: BindingQueueEvent },
  guards: {
    holdsNoMore: ({ context }) => context.stopping || context.queue.length === 0,
    isOwnRun: ({ context, event }) => event.type === 'binding.ended' && event.runId === context.runId,
  },
  actions: {
    pass: sendParent(({ context }, event: EventOf<'binding.submit'>): BindingQueueReport => {
      return {
        type: 'binding.pass',
        binding: context.binding,
        entry: event.entry,
        at: event.at,
        ...definedFields({ reqId: event.reqId }),
      };
    }),
    passHead: enqueueActions(({ context, enqueue }) => {
      const head = context.queue.head;
      if (!head) return;
      enqueue.assign({ queue: context.queue.shift() });
      enqueue.sendParent({
        type: 'binding.pass',
        binding: context.binding,
        entry: head,
        at: context.now,
        waited: true,
      } satisfies BindingQueueReport);
    }),
    acceptOffer: sendParent(({ context }, event: EventOf<'binding.offer'>): BindingQueueReport => {
      return { type: 'binding.offerAccepted', binding: context.binding, slot: event.slot, missionId: event.entry.id, at: event.at };
    }),
    enqueue: enqueueActions(({ context, enqueue }, event: EventOf<'binding.submit' | 'binding.offer'>) => {
      const queue = context.queue.push(event.entry);
      enqueue.assign({ queue, now: Math.max(context.now, event.at) });
      enqueue.sendParent({
        type: 'binding.queued',
        binding: context.binding,
        entry: event.entry,
        depth: queue.length,
        ...(event.type === 'binding.submit' && event.reqId !== undefined ? { reqId: event.reqId } : {}),
        ...(event.type === 'binding.offer' ? { fromSlot: event.slot } : {}),
      } satisfies BindingQueueReport);
    }),
    drop: enqueueActions(({ context, enqueue }) => {
      if (context.queue.length === 0) return;
      enqueue.sendParent({
        type: 'binding.dropped',
        binding: context.binding,
        entries: context.queue.toArray(),
        reason: 'binding_closed',
      } satisfies BindingQueueReport);
      enqueue.assign({ queue: MissionQueue.empty });
    }),
    frontMission: enqueueActions(({ context, enqueue }, event: EventOf<'binding.frontMission'>) => {
      const { queue, entry, from } = toFront(context.queue.toArray(), event.missionId);
      if (entry !== undefined) enqueue.assign({ queue: MissionQueue.of(queue) });
      enqueue.sendParent({
        type: 'binding.moved',
        binding: context.binding,
        missionId: event.missionId,
        ...(entry !== undefined ? { entry, from } : {}),
        ...definedFields({ reqId: event.reqId }),
      } satisfies BindingQueueReport);
    }),
    dropMission: enqueueActions(({ context, enqueue }, event: EventOf<'binding.dropMission'>) => {
      const entry = context.queue.find(event.missionId);
      if (entry === undefined) return;
      enqueue.assign({ queue: context.queue.without(event.missionId) });
      enqueue.sendParent({
        type: 'binding.dropped',
        binding: context.binding,
        entries: [entry],
        reason: event.reason,
      } satisfies BindingQueueReport);
    }),
    noteTime: assign({
      now: ({ context, event }) => ('at' in event ? Math.max(context.now, event.at) : context.now),
    }),
  },
}).createMachine({
  id: 'bindingQueue',
  context: ({ input }) => ({ ...input, queue: MissionQueue.of(input.queue), now: 0, stopping: false }),
  initial: 'free',
  on: {
    'binding.drop': { actions: 'drop' },
    'binding.dropMission': { actions: { type: 'dropMission', params: ({ event }) => event } },
    'binding.frontMission': { actions: { type: 'frontMission', params: ({ event }) => event } },
    'binding.stop': { actions: assign({ stopping: true }) },
  },
  states: {
    free: {
      on: {
        'binding.submit': { target: 'reserved', actions: ['noteTime', { type: 'pass', params: ({ event }) => event }] },
        'binding.offer': { target: 'reserved', actions: ['noteTime', { type: 'acceptOffer', params: ({ event }) => event }] },
        'binding.drain': { target: 'next', actions: 'noteTime' },
        // A run of a previous hall that still lives holds the binding.
        'binding.started': { target: 'occupied', actions: assign({ runId: ({ event }) => event.runId }) },
      },
    },
    reserved: {
      on: {
        'binding.submit': { actions: { type: 'enqueue', params: ({ event }) => event } },
        'binding.offer': { actions: { type: 'enqueue', params: ({ event }) => event } },
        'binding.started': { target: 'occupied', actions: assign({ runId: ({ event }) => event.runId }) },
        'binding.waiting': { target: 'next', actions: 'noteTime' },
      },
    },
    occupied: {
      on: {
        'binding.submit': { actions: { type: 'enqueue', params: ({ event }) => event } },
        'binding.offer': { actions: { type: 'enqueue', params: ({ event }) => event } },
        'binding.ended': { guard: 'isOwnRun', target: 'next', actions: ['noteTime', assign({ runId: undefined })] },
      },
    },
    next: {
      always: [
        { guard: 'holdsNoMore', target: 'free' },
        { target: 'reserved', actions: 'passHead' },
      ],
    },
  },
});
