/**
 * The hall root actor: owns the slots and binding queues, routes missions
 * between them, answers control commands, and keeps the session of each
 * binding. Lifecycle: booting → running → stopping → stopped.
 *
 * It decides; it never does I/O. What it decided leaves as emitted events
 * (see hall-effects.ts) that adapters carry out.
 */
import { assign, emit, enqueueActions, setup, type ActorRefFrom, type ParameterizedObject } from 'xstate';
import type { Mission, TelegramTarget } from '../domain/mission.js';
import { effectiveBinding, slotBinding, slotOf } from '../domain/names.js';
import { ownEntry as own } from '../domain/own-entry.js';
import type { RunIdCursor } from '../domain/run-id.js';
import { bindingQueueMachine, type BindingQueueReport } from './binding-queue.machine.js';
import type { HallEmitted, ReplyBody } from './hall-effects.js';
import {
  bindingQueuedEvent,
  bindingQueuedReply,
  busEffect as bus,
  cancelledWaitingReply,
  doneEvent,
  droppedEvent,
  type EndedRun,
  liveRunOf,
  movedEvent,
  movedReply,
  refusedEvent,
  refusedReply,
  replyEffect as reply,
  slotQueuedEvent,
  slotQueuedReply,
  spawnedEvent,
  spawnedReply,
  storeEffect as store,
  unstartedReply,
} from './hall-payloads.js';
import type { RunOutput, RunPreparedReport, RunSpawnedReport } from './run.machine.js';
import { runActorId } from './run-host.js';
import { type AdoptedRun, type DropReason, slotMachine, type SlotReport } from './slot.machine.js';

export type { EndedRun };

export interface HallInput {
  root: string;
  /** cancel_grace in milliseconds. */
  graceMs: number;
  /** How long raiders get to end after SIGTERM when the hall stops. */
  shutdownGraceMs: number;
  slotQueues: Record<string, Mission[]>;
  bindingQueues: Record<string, Mission[]>;
  sessions: Record<string, string>;
  runIdCursors: Record<string, RunIdCursor>;
  adopted: AdoptedRun[];
  ended: EndedRun[];
}

export interface HallContext extends HallInput {
  slots: Record<string, ActorRefFrom<typeof slotMachine>>;
  bindings: Record<string, ActorRefFrom<typeof bindingQueueMachine>>;
  /**
   * How many runs live. A count, not a record of them: the runs are found by
   * their system id, and a record copied on every start and end costs O(n)
   * per run when a burst has a thousand of them at once.
   */
  liveRuns: number;
}

export interface SpawnCommand {
  type: 'cmd.spawn';
  reqId?: string;
  missionId: string;
  /** Checked before it comes here (the gateway): a safe raider name. */
  name: string;
  mission: string;
  binding?: string;
  telegram?: TelegramTarget;
  permission_mode?: string;
  cwd?: string;
  at: number;
}

export type HallCommand =
  | SpawnCommand
  | { type: 'cmd.kill'; reqId: string; id: string }
  | { type: 'cmd.cancel'; reqId: string; id: string }
  /** Moves a waiting mission (by its id) to the front of its queue. */
  | { type: 'cmd.queueFront'; reqId: string; id: string }
  | { type: 'cmd.sessionReset'; reqId?: string; binding: string }
  | { type: 'cmd.dropQueued'; reqId?: string; binding: string }
  /** Binds a binding to an existing session (ACP sessions are their raider session). */
  | { type: 'cmd.bindSession'; reqId?: string; binding: string; session: string }
  /** Forgets a binding; its journal stays. */
  | { type: 'cmd.unbindSession'; reqId?: string; binding: string };

export type HallEvent =
  | { type: 'hall.boot'; at: number }
  | { type: 'hall.stop' }
  | HallCommand
  | SlotReport
  | BindingQueueReport
  | RunPreparedReport
  | RunSpawnedReport;

/** The event of one type: what an action with typed params is given. */
type EventOf<T extends HallEvent['type']> = Extract<HallEvent, { type: T }>;

type SlotRef = ActorRefFrom<typeof slotMachine>;
type BindingRef = ActorRefFrom<typeof bindingQueueMachine>;

/** The mission a spawn command asks for, as its queues keep it. */
function missionOf(cmd: SpawnCommand): Mission {
  return {
    id: cmd.missionId,
    name: cmd.name,
    mission: cmd.mission,
    ...(cmd.binding !== undefined ? { binding: cmd.binding } : {}),
    ...(cmd.telegram !== undefined ? { telegram: cmd.telegram } : {}),
    ...(cmd.permission_mode !== undefined ? { permission_mode: cmd.permission_mode } : {}),
    ...(cmd.cwd !== undefined ? { cwd: cmd.cwd } : {}),
  };
}

/** A waiting mission and the queue actor that holds it. */
interface Waiting {
  entry: Mission;
  queue: { kind: 'slot'; ref: SlotRef } | { kind: 'binding'; ref: BindingRef };
}

/** Finds a waiting mission by its id in the slot and binding queues (the queues live in the children). */
function findWaiting(context: HallContext, missionId: string): Waiting | undefined {
  for (const ref of Object.values(context.slots)) {
    const entry = ref.getSnapshot().context.queue.find((m) => m.id === missionId);
    if (entry) return { entry, queue: { kind: 'slot', ref } };
  }
  for (const ref of Object.values(context.bindings)) {
    const entry = ref.getSnapshot().context.queue.find((m) => m.id === missionId);
    if (entry) return { entry, queue: { kind: 'binding', ref } };
  }
  return undefined;
}

function notWaiting(missionId: string): string {
  return `no waiting mission ${missionId}: it started, was dropped, or never was (\`raider hall queue\` lists the waiting ids)`;
}

/** The slot actor that `ensureSlot` made just before: a missing one is a bug in the hall, not an event to drop. */
function slotRefOf(context: HallContext, slot: string): SlotRef {
  const ref = own(context.slots, slot);
  if (!ref) throw new Error(`the hall has no actor for slot ${slot}`);
  return ref;
}

/** The binding queue actor that `ensureBinding` made just before (see slotRefOf). */
function bindingRefOf(context: HallContext, binding: string): BindingRef {
  const ref = own(context.bindings, binding);
  if (!ref) throw new Error(`the hall has no actor for binding ${binding}`);
  return ref;
}

/** The queue actor of a mission's explicit binding, if it has one and the actor exists. */
function bindingRefOfEntry(context: HallContext, entry: Mission): BindingRef | undefined {
  return entry.binding !== undefined ? own(context.bindings, entry.binding) : undefined;
}

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
    noLiveRuns: ({ context }) => context.liveRuns === 0,
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

/** The hall's own actions that its other actions enqueue by name. */
type EnsureAction = { type: 'ensureSlot'; params: { name: string } } | { type: 'ensureBinding'; params: { binding: string } };

/**
 * An action of the hall that is given what it needs as typed params (bound
 * where the transition names it), rather than reading and re-checking the
 * event: setup's own enqueueActions takes no params.
 */
function hallAction<P extends ParameterizedObject['params'] | undefined>(
  collect: Parameters<
    typeof enqueueActions<HallContext, HallEvent, P, HallEvent, never, EnsureAction, never, 'shutdownGrace' | 'lastResort', HallEmitted>
  >[0],
) {
  return enqueueActions(collect);
}

export const hallMachine = hallSetup
  .extend({
    actions: {
      acceptSpawn: hallAction(({ context, enqueue }, cmd: SpawnCommand) => {
        const entry = missionOf(cmd);
        const reqId = cmd.reqId !== undefined ? { reqId: cmd.reqId } : {};
        const explicit = entry.binding;
        if (explicit !== undefined) {
          enqueue({ type: 'ensureBinding', params: { binding: explicit } });
          enqueue.sendTo(({ context: c }) => bindingRefOf(c, explicit), { type: 'binding.submit', entry, at: cmd.at, ...reqId });
          return;
        }
        const { slot } = slotOf(entry.name);
        const binding = effectiveBinding(slot, undefined);
        const session = binding !== undefined ? own(context.sessions, binding) : undefined;
        enqueue({ type: 'ensureSlot', params: { name: entry.name } });
        enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), {
          type: 'slot.submit',
          entry,
          at: cmd.at,
          ...(session !== undefined ? { session } : {}),
          ...reqId,
        });
      }),

      /** Answers a spawn the hall cannot take in its current state. */
      refuseSpawn: hallAction(({ enqueue }, params: { reqId: string | undefined; error: string }) => {
        if (params.reqId !== undefined) enqueue.emit(reply(params.reqId, { error: params.error }));
      }),

      passToSlot: hallAction(({ context, enqueue }, pass: EventOf<'binding.pass'>) => {
        const { slot } = slotOf(pass.entry.name);
        const session = own(context.sessions, pass.binding);
        enqueue({ type: 'ensureSlot', params: { name: pass.entry.name } });
        enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), {
          type: 'slot.submit',
          entry: pass.entry,
          at: pass.at,
          ...(session !== undefined ? { session } : {}),
          ...(pass.reqId !== undefined ? { reqId: pass.reqId } : {}),
          ...(pass.waited ? { queued: true } : {}),
        });
      }),

      answerOffer: hallAction(({ context, enqueue }, offer: EventOf<'slot.offer'>) => {
        const slotRef = own(context.slots, offer.slot);
        if (!slotRef) return;
        const explicit = offer.entry.binding;
        if (explicit !== undefined) {
          enqueue({ type: 'ensureBinding', params: { binding: explicit } });
          enqueue.sendTo(({ context: c }) => bindingRefOf(c, explicit), {
            type: 'binding.offer',
            entry: offer.entry,
            slot: offer.slot,
            at: offer.at,
          });
          return;
        }
        const session = own(context.sessions, slotBinding(offer.slot));
        enqueue.sendTo(slotRef, {
          type: 'slot.offerAccepted',
          missionId: offer.entry.id,
          at: offer.at,
          ...(session !== undefined ? { session } : {}),
        });
      }),

      acceptBindingOffer: hallAction(({ context, enqueue }, accepted: EventOf<'binding.offerAccepted'>) => {
        const slotRef = own(context.slots, accepted.slot);
        if (!slotRef) return;
        const session = own(context.sessions, accepted.binding);
        enqueue.sendTo(slotRef, {
          type: 'slot.offerAccepted',
          missionId: accepted.missionId,
          at: accepted.at,
          ...(session !== undefined ? { session } : {}),
        });
      }),

      noteRunCreated: hallAction(({ context, enqueue }, created: EventOf<'slot.runCreated'>) => {
        enqueue.assign({ liveRuns: context.liveRuns + 1 });
        const bindingRef = bindingRefOfEntry(context, created.entry);
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.started', runId: created.runId });
      }),

      /**
       * A run is about to start: its record goes to the store like every other
       * durable write, and only then does the run hear that it may start (the
       * emitted store operation is carried out before the run gets this send).
       */
      recordRun: hallAction(({ enqueue, system }, prepared: RunPreparedReport) => {
        enqueue.emit(store({ op: 'run', run: prepared.run }));
        const run = system.get(runActorId(prepared.run.id));
        if (run) enqueue.sendTo(run, { type: 'run.recorded' });
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

      reportRunEnded: hallAction(({ context, enqueue }, out: RunOutput) => {
        enqueue.assign({ liveRuns: context.liveRuns - 1 });
        if (out.kind === 'refused') {
          enqueue.emit(store({ op: 'remove', missionId: out.entry.id }));
          enqueue.emit(bus(refusedEvent(out)));
          if (out.reqId !== undefined) enqueue.emit(reply(out.reqId, refusedReply(out)));
        } else {
          enqueue.emit(bus(doneEvent(out)));
          enqueue.emit(store({ op: 'end', runId: out.runId }));
          if (out.unstarted) enqueue.emit(store({ op: 'remove', missionId: out.entry.id }));
          enqueue.emit({ type: 'registry.runEnded', runId: out.runId });
          if (out.unstarted && out.reqId !== undefined) enqueue.emit(reply(out.reqId, unstartedReply(out.outcome)));
        }
        const bindingRef = bindingRefOfEntry(context, out.entry);
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.ended', runId: out.runId, at: out.endedAt });
      }),

      reportSlotQueued: hallAction(({ context, enqueue }, queued: EventOf<'slot.queued'>) => {
        enqueue.emit(store({ op: 'queue', queue: { kind: 'slot', slot: queued.slot }, entry: queued.entry }));
        enqueue.emit(bus(slotQueuedEvent(queued)));
        if (queued.reqId !== undefined) enqueue.emit(reply(queued.reqId, slotQueuedReply(queued)));
        // The binding passed this mission on; it waits in the slot, so the binding is free again.
        const bindingRef = bindingRefOfEntry(context, queued.entry);
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.waiting', at: 0 });
      }),

      reportBindingQueued: hallAction(({ context, enqueue }, queued: EventOf<'binding.queued'>) => {
        enqueue.emit(store({ op: 'queue', queue: { kind: 'binding', binding: queued.binding }, entry: queued.entry }));
        enqueue.emit(bus(bindingQueuedEvent(queued)));
        if (queued.reqId !== undefined) enqueue.emit(reply(queued.reqId, bindingQueuedReply(queued)));
        const fromSlot = queued.fromSlot !== undefined ? own(context.slots, queued.fromSlot) : undefined;
        if (fromSlot) enqueue.sendTo(fromSlot, { type: 'slot.offerDeclined', missionId: queued.entry.id, at: 0 });
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
            enqueue.emit(reply(cmd.reqId, { error: 'raider not found' }));
            return;
          }
          if (waiting.queue.kind === 'slot')
            enqueue.sendTo(waiting.queue.ref, { type: 'slot.dropMission', missionId: id, reason: 'cancelled' });
          else enqueue.sendTo(waiting.queue.ref, { type: 'binding.dropMission', missionId: id, reason: 'cancelled' });
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

      moveToFront: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.queueFront'>) => {
        const waiting = findWaiting(context, cmd.id);
        if (waiting === undefined) {
          enqueue.emit(reply(cmd.reqId, { error: notWaiting(cmd.id) }));
          return;
        }
        // The queue that holds it moves it and reports (slot.moved / binding.moved): its order is its own.
        if (waiting.queue.kind === 'slot')
          enqueue.sendTo(waiting.queue.ref, { type: 'slot.frontMission', missionId: cmd.id, reqId: cmd.reqId });
        else enqueue.sendTo(waiting.queue.ref, { type: 'binding.frontMission', missionId: cmd.id, reqId: cmd.reqId });
      }),

      reportMoved: hallAction(({ enqueue }, moved: EventOf<'slot.moved' | 'binding.moved'>) => {
        const { entry, from } = moved;
        if (entry === undefined || from === undefined) {
          if (moved.reqId !== undefined) enqueue.emit(reply(moved.reqId, { error: notWaiting(moved.missionId) }));
          return;
        }
        const binding = moved.type === 'binding.moved' ? moved.binding : undefined;
        // Moving the head is no change: nothing to record, nothing to tell.
        if (from > 1) {
          enqueue.emit(store({ op: 'front', missionId: entry.id }));
          enqueue.emit(bus(movedEvent(entry, binding, from)));
        }
        if (moved.reqId !== undefined) enqueue.emit(reply(moved.reqId, movedReply(entry, binding, from)));
      }),

      resetSession: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.sessionReset'>) => {
        const answer = (body: ReplyBody) => {
          if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, body));
        };
        const binding = cmd.binding;
        const old = own(context.sessions, binding);
        if (old === undefined) return answer({ error: `no session bound to ${binding}` });
        const { [binding]: _, ...sessions } = context.sessions;
        enqueue.assign({ sessions });
        enqueue.emit(store({ op: 'unbind', binding }));
        enqueue.emit(bus({ type: 'session.reset', binding, session: old }));
        answer({ reset: 1, binding, session: old });
      }),

      bindSession: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.bindSession'>) => {
        if (own(context.sessions, cmd.binding) !== cmd.session) {
          enqueue.assign({ sessions: { ...context.sessions, [cmd.binding]: cmd.session } });
          enqueue.emit(store({ op: 'bind', binding: cmd.binding, session: cmd.session }));
          enqueue.emit(bus({ type: 'session.bound', binding: cmd.binding, session: cmd.session }));
        }
        if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, { bound: 1, binding: cmd.binding, session: cmd.session }));
      }),

      unbindSession: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.unbindSession'>) => {
        const old = own(context.sessions, cmd.binding);
        if (old !== undefined) {
          const { [cmd.binding]: _, ...sessions } = context.sessions;
          enqueue.assign({ sessions });
          enqueue.emit(store({ op: 'unbind', binding: cmd.binding }));
        }
        if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, { unbound: old === undefined ? 0 : 1, binding: cmd.binding }));
      }),

      dropQueued: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.dropQueued'>) => {
        const ref = own(context.bindings, cmd.binding);
        if (ref) enqueue.sendTo(ref, { type: 'binding.drop' });
        for (const slotRef of Object.values(context.slots)) enqueue.sendTo(slotRef, { type: 'slot.drop', binding: cmd.binding });
        if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, { dropped: 1, binding: cmd.binding }));
      }),

      boot: hallAction(({ context, enqueue }, params: { at: number }) => {
        const slotsToDrain = new Set<string>();
        const bindingsToDrain = new Set<string>();
        for (const run of context.adopted) {
          const slot = slotOf(run.entry.name).slot;
          const explicit = run.entry.binding;
          enqueue({ type: 'ensureSlot', params: { name: slot } });
          slotsToDrain.add(slot);
          enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), { type: 'slot.adopt', ...run });
          if (explicit !== undefined) {
            enqueue({ type: 'ensureBinding', params: { binding: explicit } });
            bindingsToDrain.add(explicit);
            enqueue.sendTo(({ context: c }) => bindingRefOf(c, explicit), { type: 'binding.started', runId: run.runId });
          }
        }
        enqueue.assign({ liveRuns: context.liveRuns + context.adopted.length });
        for (const [slot, queue] of Object.entries(context.slotQueues)) {
          if (queue.length === 0) continue;
          enqueue({ type: 'ensureSlot', params: { name: slot } });
          slotsToDrain.add(slot);
        }
        for (const [binding, queue] of Object.entries(context.bindingQueues)) {
          if (queue.length === 0) continue;
          enqueue({ type: 'ensureBinding', params: { binding } });
          bindingsToDrain.add(binding);
        }
        // What a previous hall left waiting starts first: slots in name order, then bindings.
        for (const slot of [...slotsToDrain].sort()) {
          enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), { type: 'slot.drain', at: params.at });
        }
        for (const binding of [...bindingsToDrain].sort()) {
          enqueue.sendTo(({ context: c }) => bindingRefOf(c, binding), { type: 'binding.drain', at: params.at });
        }
        for (const run of context.ended) {
          enqueue.emit(bus(doneEvent(run)));
          enqueue.emit(store({ op: 'end', runId: run.runId }));
        }
        enqueue.emit(bus({ type: 'hall.started', root: context.root }));
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
    context: ({ input }) => ({ ...input, slots: {}, bindings: {}, liveRuns: 0 }),
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
