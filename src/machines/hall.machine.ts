/**
 * The hall root actor: owns the slots and binding queues, routes missions
 * between them, answers control commands, and keeps the session of each
 * binding. Lifecycle: booting → running → stopping → stopped.
 *
 * It decides; it never does I/O. What it decided leaves as emitted events
 * (see hall-effects.ts) that adapters carry out.
 *
 * Its jobs are rooms of their own, whose actions this config names:
 * admission under `max_running` (hall-admission.ts), mission routing
 * (hall-routing.ts), waiting missions by id for cancel and queue_front
 * (hall-waiting.ts), session binding (hall-sessions.ts), boot recovery
 * (hall-recovery.ts) and cluster claims (hall-cluster.ts). Here: the tree of
 * slots and binding queues, the reports of runs, and the lifecycle.
 */
import { assign, emit, setup } from 'xstate';
import type { Mission } from '../domain/mission.js';
import { slotOf } from '../domain/names.js';
import { ownEntry as own } from '../domain/own-entry.js';
import { bindingQueueMachine } from './binding-queue.machine.js';
import { anySlotHasRuns, type BindingRef, type SlotRef } from './hall-children.js';
import { clusterActions } from './hall-cluster.js';
import { bindingRefOfEntry, type EventOf, type HallContext, type HallEvent, type HallInput, hallAction } from './hall-context.js';
import type { HallEmitted } from './hall-effects.js';
import { runNotFound } from '../protocol/replies.js';
import {
  bindingQueuedEvent,
  bindingQueuedReply,
  busEffect as bus,
  cancelledWaitingReply,
  endEvents,
  endOps,
  droppedEvent,
  type EndedRun,
  liveRunOf,
  refusedEvent,
  refusedReply,
  replyEffect as reply,
  type SlotQueued,
  spawnedEvent,
  spawnedReply,
  storeEffect as store,
  unstartedReply,
} from './hall-payloads.js';
import { recoveryActions } from './hall-recovery.js';
import { letThrough, routingActions, tellSlotQueued } from './hall-routing.js';
import { sessionActions } from './hall-sessions.js';
import { dropFromRoom, findWaiting, waitingActions } from './hall-waiting.js';
import type { RunOutput, RunPreparedReport, RunSpawnedReport } from './run.machine.js';
import { runActorId } from './run-host.js';
import { type DropReason, slotMachine } from './slot.machine.js';

export type { EndedRun };
export type { RoomWait } from './hall-admission.js';
export type { HallCommand, HallContext, HallEvent, HallInput, SpawnCommand } from './hall-context.js';
export { missionOf } from './hall-routing.js';

const hallSetup = setup({
  types: {} as {
    context: HallContext;
    input: HallInput;
    events: HallEvent;
    emitted: HallEmitted;
  },
  actors: { slot: slotMachine, bindingQueue: bindingQueueMachine },
  delays: {
    shutdownGrace: ({ context }) => context.shutdownGraceMs,
    // After SIGKILL a process is gone at once; this only guards against a run that never reports.
    lastResort: ({ context }) => context.shutdownGraceMs + 5000,
  },
  guards: {
    // The slots' own lists of their runs (hall-children.ts): no count of the hall's to keep on every start.
    noLiveRuns: ({ context }) => !anySlotHasRuns(context.slots),
  },
  actions: {
    ensureSlot: assign(({ context, spawn }, params: { name: string }) => {
      const { slot, baseName, singleton } = slotOf(params.name);
      if (own(context.slots, slot)) return {};
      const cursor = own(context.runIdCursors, slot);
      const ref: SlotRef = spawn('slot', {
        id: `slot:${slot}`,
        systemId: `slot:${slot}`,
        input: {
          slot,
          baseName,
          singleton,
          queue: own(context.slotQueues, slot) ?? [],
          ...(cursor ? { lastRunId: cursor } : {}),
          graceMs: context.graceMs,
        },
      });
      return { slots: { ...context.slots, [slot]: ref } };
    }),
    ensureBinding: assign(({ context, spawn }, params: { binding: string }) => {
      if (own(context.bindings, params.binding)) return {};
      const ref: BindingRef = spawn('bindingQueue', {
        id: `binding:${params.binding}`,
        systemId: `binding:${params.binding}`,
        input: { binding: params.binding, queue: own(context.bindingQueues, params.binding) ?? [] },
      });
      return { bindings: { ...context.bindings, [params.binding]: ref } };
    }),
  },
});

export const hallMachine = hallSetup
  .extend({
    actions: {
      ...routingActions,
      ...waitingActions,
      ...sessionActions,
      ...clusterActions,
      ...recoveryActions,

      /** Told only of a run whose binding queue or reserved run id is the hall's business (slot.machine.ts, `startRun`). */
      noteRunCreated: hallAction(({ context, enqueue }, created: EventOf<'slot.runCreated'>) => {
        if (own(context.reservedRunIds, created.entry.id) !== undefined) {
          const { [created.entry.id]: _, ...reservedRunIds } = context.reservedRunIds;
          enqueue.assign({ reservedRunIds });
        }
        const bindingRef = bindingRefOfEntry(context, created.entry);
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.started', runId: created.runId });
      }),

      /**
       * A run is about to start: its record goes to the store like every other
       * durable write. Its raider is asked for only once the store holds the
       * record and has written it (the run's process actor waits for that:
       * src/actors/record-written.ts), so no go-ahead goes back to the run.
       */
      recordRun: hallAction(({ enqueue }, prepared: RunPreparedReport) => {
        enqueue.emit(store({ op: 'run', run: prepared.run }));
      }),

      reportSpawned: hallAction(({ context, enqueue }, report: RunSpawnedReport) => {
        const { binding, session } = report;
        if (binding !== undefined && session !== undefined && report.sessionCreated) {
          enqueue.assign({ sessions: { ...context.sessions, [binding]: session } });
          enqueue.emit(store({ op: 'bind', session, binding }));
          enqueue.emit(bus({ type: 'session.bound', session, binding }));
        }
        enqueue.emit({ type: 'registry.runStarted', run: liveRunOf(report) });
        if (report.adopted) return;
        enqueue.emit(store({ op: 'pid', runId: report.runId, pid: report.pid }));
        enqueue.emit(bus(spawnedEvent(report)));
        if (report.sessionError !== undefined && binding !== undefined) {
          enqueue.emit(bus({ type: 'hall.session_error', binding, error: report.sessionError, id: report.runId }));
        }
        if (report.reqId !== undefined) enqueue.emit(reply(report.reqId, spawnedReply(report)));
      }),

      reportRunEnded: hallAction(({ context, enqueue, self }, out: RunOutput) => {
        if (out.kind === 'refused') {
          enqueue.emit(store({ op: 'remove', missionId: out.entry.id }));
          enqueue.emit(bus(refusedEvent(out)));
          if (out.reqId !== undefined) enqueue.emit(reply(out.reqId, refusedReply(out)));
        } else {
          // A run another hall already reported (this hall had been taken for lost) ends silently.
          const replaced = own(context.silenced, out.runId);
          if (replaced) {
            const { [out.runId]: _, ...silenced } = context.silenced;
            enqueue.assign({ silenced });
          } else for (const event of endEvents(out)) enqueue.emit(bus(event));
          for (const op of endOps(out)) enqueue.emit(store(op));
          // The mission of a replaced run went back to the cluster's queue, where this hall may have claimed it
          // again meanwhile: removing it would drop that claim, and the mission with it, unrun and unreported.
          if (out.unstarted && !replaced) enqueue.emit(store({ op: 'remove', missionId: out.entry.id }));
          enqueue.emit({ type: 'registry.runEnded', runId: out.runId });
          if (out.unstarted && out.reqId !== undefined) enqueue.emit(reply(out.reqId, unstartedReply(out.outcome)));
        }
        const bindingRef = bindingRefOfEntry(context, out.entry);
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.ended', runId: out.runId, at: out.endedAt });
        letThrough(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
      }),

      reportSlotQueued: hallAction(({ context, enqueue, self }, queued: SlotQueued) => {
        tellSlotQueued(enqueue, queued);
        // The binding passed this mission on; it waits in the slot, so the binding is free again.
        const bindingRef = bindingRefOfEntry(context, queued.entry);
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.waiting', at: 0 });
        // It waits in its slot: the room it took goes to the next start.
        letThrough(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
      }),

      reportBindingQueued: hallAction(({ context, enqueue, self }, queued: EventOf<'binding.queued'>) => {
        enqueue.emit(store({ op: 'queue', queue: { kind: 'binding', binding: queued.binding }, entry: queued.entry }));
        enqueue.emit(bus(bindingQueuedEvent(queued)));
        if (queued.reqId !== undefined) enqueue.emit(reply(queued.reqId, bindingQueuedReply(queued)));
        const fromSlot = queued.fromSlot !== undefined ? own(context.slots, queued.fromSlot) : undefined;
        if (fromSlot) enqueue.sendTo(fromSlot, { type: 'slot.offerDeclined', missionId: queued.entry.id, at: 0 });
        letThrough(context, enqueue, { freed: 1, stopping: self.getSnapshot().matches('stopping') });
      }),

      reportDropped: hallAction(({ enqueue }, dropped: { entries: Mission[]; reason: DropReason }) => {
        for (const entry of dropped.entries) {
          enqueue.emit(store({ op: 'remove', missionId: entry.id }));
          enqueue.emit(bus(droppedEvent(entry, dropped.reason)));
        }
      }),

      signalRun: hallAction(({ context, enqueue, system }, cmd: EventOf<'cmd.kill' | 'cmd.cancel'>) => {
        const id = cmd.id;
        const ref = system.get(runActorId(id));
        if (!ref) {
          const waiting = cmd.type === 'cmd.cancel' ? findWaiting(context, id) : undefined;
          if (waiting === undefined) {
            enqueue.emit(reply(cmd.reqId, runNotFound()));
            return;
          }
          if (waiting.queue.kind === 'slot')
            enqueue.sendTo(waiting.queue.ref, { type: 'slot.dropMission', missionId: id, reason: 'cancelled' });
          else if (waiting.queue.kind === 'binding')
            enqueue.sendTo(waiting.queue.ref, { type: 'binding.dropMission', missionId: id, reason: 'cancelled' });
          else dropFromRoom(context, enqueue, { reason: 'cancelled', missionId: id });
          enqueue.emit(reply(cmd.reqId, cancelledWaitingReply(waiting.entry)));
          return;
        }
        if (cmd.type === 'cmd.kill') {
          enqueue.sendTo(ref, { type: 'run.kill' });
          enqueue.emit(reply(cmd.reqId, { killed: 1, id }));
        } else {
          enqueue.sendTo(ref, { type: 'run.cancel' });
          enqueue.emit(reply(cmd.reqId, { cancelled: 1, id }));
        }
      }),

      beginStopping: hallAction(({ context, enqueue }) => {
        enqueue.emit(bus({ type: 'hall.stopping' }));
        for (const ref of Object.values(context.bindings)) enqueue.sendTo(ref, { type: 'binding.stop' });
        for (const ref of Object.values(context.slots)) enqueue.sendTo(ref, { type: 'slot.stop' });
      }),
      forceKill: hallAction(({ context, enqueue }) => {
        for (const ref of Object.values(context.slots)) enqueue.sendTo(ref, { type: 'slot.forceKill' });
      }),
    },
  })
  .createMachine({
    id: 'hall',
    context: ({ input }) => ({
      ...input,
      slots: {},
      bindings: {},
      tickets: 0,
      roomQueue: [],
      silenced: {},
      reservedRunIds: {},
    }),
    initial: 'booting',
    on: {
      // Reports from the actor tree are handled in every state: nothing a run says is lost.
      'slot.runCreated': { actions: { type: 'noteRunCreated', params: ({ event }) => event } },
      'run.prepared': { actions: { type: 'recordRun', params: ({ event }) => event } },
      'run.spawned': { actions: { type: 'reportSpawned', params: ({ event }) => event } },
      'slot.runEnded': { actions: { type: 'reportRunEnded', params: ({ event }) => event.output } },
      'slot.queued': { actions: { type: 'reportSlotQueued', params: ({ event }) => event } },
      'binding.queued': { actions: { type: 'reportBindingQueued', params: ({ event }) => event } },
      'slot.dropped': { actions: { type: 'reportDropped', params: ({ event }) => event } },
      'binding.dropped': { actions: { type: 'reportDropped', params: ({ event }) => event } },
      'cmd.kill': { actions: { type: 'signalRun', params: ({ event }) => event } },
      'cmd.cancel': { actions: { type: 'signalRun', params: ({ event }) => event } },
      'cmd.queueFront': { actions: { type: 'moveToFront', params: ({ event }) => event } },
      'slot.moved': { actions: { type: 'reportMoved', params: ({ event }) => event } },
      'binding.moved': { actions: { type: 'reportMoved', params: ({ event }) => event } },
      'cmd.sessionReset': { actions: { type: 'resetSession', params: ({ event }) => event } },
      'cmd.dropQueued': { actions: { type: 'dropQueued', params: ({ event }) => event } },
      'cmd.bindSession': { actions: { type: 'bindSession', params: ({ event }) => event } },
      'cmd.unbindSession': { actions: { type: 'unbindSession', params: ({ event }) => event } },
      'cluster.replaced': { actions: { type: 'stopReplacedRuns', params: ({ event }) => event } },
      'cluster.session': { actions: { type: 'learnClusterSession', params: ({ event }) => event } },
    },
    states: {
      booting: {
        on: {
          'hall.boot': { target: 'running', actions: { type: 'boot', params: ({ event }) => event } },
          'hall.stop': 'stopping',
          // Before the boot nothing may overtake the missions a previous hall left waiting.
          'cmd.spawn': {
            actions: {
              type: 'refuseSpawn',
              params: ({ event }) => ({ reqId: event.reqId, error: 'the hall is starting; try again in a moment' }),
            },
          },
        },
      },
      running: {
        on: {
          'cmd.spawn': { actions: { type: 'acceptSpawn', params: ({ event }) => event } },
          'cluster.claimed': { actions: { type: 'acceptClaimed', params: ({ event }) => event } },
          'binding.pass': { actions: { type: 'passToSlot', params: ({ event }) => event } },
          'slot.offer': { actions: { type: 'answerOffer', params: ({ event }) => event } },
          'binding.offerAccepted': { actions: { type: 'acceptBindingOffer', params: ({ event }) => event } },
          'hall.stop': 'stopping',
        },
      },
      stopping: {
        entry: 'beginStopping',
        always: { guard: 'noLiveRuns', target: 'stopped' },
        after: {
          shutdownGrace: { actions: 'forceKill' },
          lastResort: { target: 'stopped' },
        },
        on: {
          'cmd.spawn': {
            actions: {
              type: 'refuseSpawn',
              params: ({ event }) => ({ reqId: event.reqId, error: 'the hall is stopping; the mission was not accepted' }),
            },
          },
        },
      },
      stopped: {
        type: 'final',
        entry: emit({ type: 'hall.stopped' } as const),
      },
    },
  });
