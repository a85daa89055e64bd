/**
 * The hall root actor: owns the slots and binding queues, routes missions
 * between them, answers control commands, and keeps the session of each
 * binding. Lifecycle: booting → running → stopping → stopped.
 *
 * It decides; it never does I/O. What it decided leaves as emitted events
 * (see hall-effects.ts) that adapters carry out.
 */
import { assign, emit, setup, type ActorRefFrom } from 'xstate';
import type { Mission, TelegramTarget } from '../domain/mission.js';
import { effectiveBinding, slotBinding, slotOf } from '../domain/names.js';
import type { RunOutcome } from '../domain/outcome.js';
import type { RunIdCursor } from '../domain/run-id.js';
import { bindingQueueMachine, type BindingQueueReport } from './binding-queue.machine.js';
import type { HallBusEvent, RaiderDoneEvent } from '../protocol/events.js';
import type { HallEmitted, ReplyBody, StoreOp } from './hall-effects.js';
import type { RunOutput, RunSpawnedReport } from './run.machine.js';
import { runActorId } from './run-host.js';
import { type AdoptedRun, slotMachine, type SlotReport } from './slot.machine.js';
import { ownEntry as own } from '../domain/own-entry.js';

/** A run of a previous hall found already gone at start-up: reported, never run again. */
export interface EndedRun {
  runId: string;
  slot: string;
  pid: number;
  entry: Mission;
  binding?: string;
  session?: string;
  outcome: RunOutcome;
}

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
  | RunSpawnedReport;

type SlotRef = ActorRefFrom<typeof slotMachine>;
type BindingRef = ActorRefFrom<typeof bindingQueueMachine>;

const bus = (event: HallBusEvent): HallEmitted => ({ type: 'bus', event });
const store = (op: StoreOp): HallEmitted => ({ type: 'store', op });
const reply = (reqId: string, body: ReplyBody): HallEmitted => ({ type: 'reply', reqId, body });

/** The `raider.done` event of a run (docs/protocol.md). */
function doneEvent(run: EndedRun & { cancelRequested?: boolean }): RaiderDoneEvent {
  const o = run.outcome;
  return {
    type: 'raider.done',
    id: run.runId,
    slot: run.slot,
    pid: run.pid,
    exit_code: o.exit_code,
    signaled: o.signaled,
    status: o.status,
    ...(o.response !== undefined ? { response: o.response } : {}),
    ...(o.error !== undefined ? { error: o.error } : {}),
    ...(o.hall_stop !== undefined ? { hall_stop: o.hall_stop } : {}),
    ...(o.session !== undefined ? { session: o.session } : {}),
    ...(run.binding !== undefined && run.session !== undefined ? { binding: run.binding } : {}),
    mission_id: run.entry.id,
    ...(run.cancelRequested ? { cancel_requested: true } : {}),
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

/** The explicit binding of a mission, which has a queue machine of its own. */
function explicitBinding(entry: Mission): string | undefined {
  return entry.binding;
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

export const hallMachine = hallSetup
  .extend({
    actions: {
      acceptSpawn: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.spawn') return;
        const entry: Mission = {
          id: event.missionId,
          name: event.name,
          mission: event.mission,
          ...(event.binding !== undefined ? { binding: event.binding } : {}),
          ...(event.telegram !== undefined ? { telegram: event.telegram } : {}),
          ...(event.permission_mode !== undefined ? { permission_mode: event.permission_mode } : {}),
          ...(event.cwd !== undefined ? { cwd: event.cwd } : {}),
        };
        const reqId = event.reqId !== undefined ? { reqId: event.reqId } : {};
        const explicit = entry.binding;
        if (explicit !== undefined) {
          enqueue({ type: 'ensureBinding', params: { binding: explicit } });
          enqueue.sendTo(({ context: c }) => bindingRefOf(c, explicit), {
            type: 'binding.submit',
            entry,
            at: event.at,
            ...reqId,
          });
          return;
        }
        const { slot } = slotOf(entry.name);
        const binding = effectiveBinding(slot, undefined);
        const session = binding !== undefined ? own(context.sessions, binding) : undefined;
        enqueue({ type: 'ensureSlot', params: { name: entry.name } });
        enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), {
          type: 'slot.submit',
          entry,
          at: event.at,
          ...(session !== undefined ? { session } : {}),
          ...reqId,
        });
      }),

      refuseWhileStopping: hallSetup.enqueueActions(({ event, enqueue }) => {
        if (event.type === 'cmd.spawn' && event.reqId !== undefined) {
          enqueue.emit(reply(event.reqId, { error: 'the hall is stopping; the mission was not accepted' }));
        }
      }),

      refuseWhileBooting: hallSetup.enqueueActions(({ event, enqueue }) => {
        if (event.type === 'cmd.spawn' && event.reqId !== undefined) {
          enqueue.emit(reply(event.reqId, { error: 'the hall is starting; try again in a moment' }));
        }
      }),

      passToSlot: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'binding.pass') return;
        const { slot } = slotOf(event.entry.name);
        const session = own(context.sessions, event.binding);
        enqueue({ type: 'ensureSlot', params: { name: event.entry.name } });
        enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), {
          type: 'slot.submit',
          entry: event.entry,
          at: event.at,
          ...(session !== undefined ? { session } : {}),
          ...(event.reqId !== undefined ? { reqId: event.reqId } : {}),
          ...(event.waited ? { queued: true } : {}),
        });
      }),

      answerOffer: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'slot.offer') return;
        const slotRef = own(context.slots, event.slot);
        if (!slotRef) return;
        const explicit = explicitBinding(event.entry);
        if (explicit !== undefined) {
          enqueue({ type: 'ensureBinding', params: { binding: explicit } });
          enqueue.sendTo(({ context: c }) => bindingRefOf(c, explicit), {
            type: 'binding.offer',
            entry: event.entry,
            slot: event.slot,
            at: event.at,
          });
          return;
        }
        const session = own(context.sessions, slotBinding(event.slot));
        enqueue.sendTo(slotRef, {
          type: 'slot.offerAccepted',
          missionId: event.entry.id,
          at: event.at,
          ...(session !== undefined ? { session } : {}),
        });
      }),

      acceptBindingOffer: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'binding.offerAccepted') return;
        const slotRef = own(context.slots, event.slot);
        if (!slotRef) return;
        const session = own(context.sessions, event.binding);
        enqueue.sendTo(slotRef, {
          type: 'slot.offerAccepted',
          missionId: event.missionId,
          at: event.at,
          ...(session !== undefined ? { session } : {}),
        });
      }),

      noteRunCreated: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'slot.runCreated') return;
        const explicit = explicitBinding(event.entry);
        enqueue.assign({ liveRuns: context.liveRuns + 1 });
        const bindingRef = explicit !== undefined ? own(context.bindings, explicit) : undefined;
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.started', runId: event.runId });
      }),

      reportSpawned: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'run.spawned') return;
        const { binding, session } = event;
        const bound = binding !== undefined && session !== undefined ? { session, binding } : undefined;
        if (bound && event.sessionCreated) {
          enqueue.assign({ sessions: { ...context.sessions, [bound.binding]: bound.session } });
          enqueue.emit(store({ op: 'bind', ...bound }));
          enqueue.emit(bus({ type: 'session.bound', ...bound }));
        }
        const boundFields = bound ?? {};
        enqueue.emit({
          type: 'registry.runStarted',
          run: {
            id: event.runId,
            slot: event.slot,
            base_name: event.baseName,
            pid: event.pid,
            mission: event.entry.mission,
            mission_id: event.entry.id,
            ...boundFields,
            events_path: event.eventsPath,
            log_path: event.logPath,
            started_at: event.startedAt,
          },
        });
        if (event.adopted) return;
        enqueue.emit(store({ op: 'pid', runId: event.runId, pid: event.pid }));
        enqueue.emit(
          bus({
            type: 'raider.spawned',
            id: event.runId,
            pid: event.pid,
            slot: event.slot,
            base_name: event.baseName,
            mission_id: event.entry.id,
            ...boundFields,
          }),
        );
        if (event.sessionError !== undefined && event.binding !== undefined) {
          enqueue.emit(bus({ type: 'hall.session_error', binding: event.binding, error: event.sessionError, id: event.runId }));
        }
        if (event.reqId !== undefined) {
          enqueue.emit(
            reply(event.reqId, {
              id: event.runId,
              pid: event.pid,
              slot: event.slot,
              events_path: event.eventsPath,
              mission_id: event.entry.id,
              ...boundFields,
            }),
          );
        }
      }),

      reportRunEnded: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'slot.runEnded') return;
        const out: RunOutput = event.output;
        enqueue.assign({ liveRuns: context.liveRuns - 1 });
        const explicit = explicitBinding(out.entry);
        if (out.kind === 'refused') {
          enqueue.emit(store({ op: 'remove', missionId: out.entry.id }));
          enqueue.emit(
            bus({
              type: 'raider.refused',
              status: 'refused',
              slot: out.slot,
              name: out.entry.name,
              ...(out.binding !== undefined ? { binding: out.binding } : {}),
              reason: out.reason,
              error: out.error,
              queued: out.queued,
              mission_id: out.entry.id,
            }),
          );
          if (out.reqId !== undefined) {
            enqueue.emit(reply(out.reqId, { status: 'refused', reason: out.reason, error: out.error }));
          }
        } else {
          const o = out.outcome;
          enqueue.emit(bus(doneEvent(out)));
          enqueue.emit(store({ op: 'end', runId: out.runId }));
          if (out.unstarted) enqueue.emit(store({ op: 'remove', missionId: out.entry.id }));
          enqueue.emit({ type: 'registry.runEnded', runId: out.runId });
          if (out.unstarted && out.reqId !== undefined) {
            enqueue.emit(reply(out.reqId, { error: `command failed: ${o.error ?? 'the raider could not be started'}` }));
          }
        }
        const bindingRef = explicit !== undefined ? own(context.bindings, explicit) : undefined;
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.ended', runId: out.runId, at: out.endedAt });
      }),

      reportSlotQueued: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'slot.queued') return;
        enqueue.emit(store({ op: 'queue', queue: { kind: 'slot', slot: event.slot }, entry: event.entry }));
        enqueue.emit(bus({ type: 'raider.queued', slot: event.slot, queue_depth: event.depth, mission_id: event.entry.id }));
        if (event.reqId !== undefined) {
          enqueue.emit(reply(event.reqId, { queued: 1, slot: event.slot, queue_depth: event.depth, mission_id: event.entry.id }));
        }
        // The binding passed this mission on; it waits in the slot, so the binding is free again.
        const explicit = explicitBinding(event.entry);
        const bindingRef = explicit !== undefined ? own(context.bindings, explicit) : undefined;
        if (bindingRef) enqueue.sendTo(bindingRef, { type: 'binding.waiting', at: 0 });
      }),

      reportBindingQueued: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'binding.queued') return;
        const name = event.entry.name;
        enqueue.emit(store({ op: 'queue', queue: { kind: 'binding', binding: event.binding }, entry: event.entry }));
        enqueue.emit(
          bus({ type: 'raider.queued', slot: name, binding: event.binding, queue_depth: event.depth, mission_id: event.entry.id }),
        );
        if (event.reqId !== undefined) {
          enqueue.emit(
            reply(event.reqId, {
              queued: 1,
              slot: name,
              binding: event.binding,
              queue_depth: event.depth,
              mission_id: event.entry.id,
            }),
          );
        }
        const fromSlot = event.fromSlot !== undefined ? own(context.slots, event.fromSlot) : undefined;
        if (fromSlot) enqueue.sendTo(fromSlot, { type: 'slot.offerDeclined', missionId: event.entry.id, at: 0 });
      }),

      reportDropped: hallSetup.enqueueActions(({ event, enqueue }) => {
        if (event.type !== 'slot.dropped' && event.type !== 'binding.dropped') return;
        for (const entry of event.entries) {
          enqueue.emit(store({ op: 'remove', missionId: entry.id }));
          enqueue.emit(
            bus({
              type: 'raider.dropped',
              mission_id: entry.id,
              slot: entry.name,
              ...(entry.binding !== undefined ? { binding: entry.binding } : {}),
              reason: event.reason,
            }),
          );
        }
      }),

      signalRun: hallSetup.enqueueActions(({ context, event, enqueue, system }) => {
        if (event.type !== 'cmd.kill' && event.type !== 'cmd.cancel') return;
        const id = event.id;
        const ref = system.get(runActorId(id));
        if (!ref) {
          const waiting = event.type === 'cmd.cancel' ? findWaiting(context, id) : undefined;
          if (waiting === undefined) {
            enqueue.emit(reply(event.reqId, { error: 'raider not found' }));
            return;
          }
          if (waiting.queue.kind === 'slot')
            enqueue.sendTo(waiting.queue.ref, { type: 'slot.dropMission', missionId: id, reason: 'cancelled' });
          else enqueue.sendTo(waiting.queue.ref, { type: 'binding.dropMission', missionId: id, reason: 'cancelled' });
          const { entry } = waiting;
          enqueue.emit(
            reply(event.reqId, {
              dropped: 1,
              mission_id: entry.id,
              slot: entry.name,
              ...(entry.binding !== undefined ? { binding: entry.binding } : {}),
            }),
          );
          return;
        }
        if (event.type === 'cmd.kill') {
          enqueue.sendTo(ref, { type: 'run.kill' });
          enqueue.emit(reply(event.reqId, { killed: 1, id }));
        } else {
          enqueue.sendTo(ref, { type: 'run.cancel' });
          enqueue.emit(reply(event.reqId, { cancelled: 1, id }));
        }
      }),

      moveToFront: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.queueFront') return;
        const waiting = findWaiting(context, event.id);
        if (waiting === undefined) {
          enqueue.emit(reply(event.reqId, { error: notWaiting(event.id) }));
          return;
        }
        // The queue that holds it moves it and reports (slot.moved / binding.moved): its order is its own.
        if (waiting.queue.kind === 'slot')
          enqueue.sendTo(waiting.queue.ref, { type: 'slot.frontMission', missionId: event.id, reqId: event.reqId });
        else enqueue.sendTo(waiting.queue.ref, { type: 'binding.frontMission', missionId: event.id, reqId: event.reqId });
      }),

      reportMoved: hallSetup.enqueueActions(({ event, enqueue }) => {
        if (event.type !== 'slot.moved' && event.type !== 'binding.moved') return;
        const { entry, from } = event;
        if (entry === undefined || from === undefined) {
          if (event.reqId !== undefined) enqueue.emit(reply(event.reqId, { error: notWaiting(event.missionId) }));
          return;
        }
        const where = event.type === 'binding.moved' ? { binding: event.binding } : {};
        // Moving the head is no change: nothing to record, nothing to tell.
        if (from > 1) {
          enqueue.emit(store({ op: 'front', missionId: entry.id }));
          enqueue.emit(bus({ type: 'raider.moved', mission_id: entry.id, slot: entry.name, ...where, position: 1, from }));
        }
        if (event.reqId !== undefined)
          enqueue.emit(reply(event.reqId, { moved: 1, mission_id: entry.id, slot: entry.name, ...where, position: 1, from }));
      }),

      resetSession: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.sessionReset') return;
        const answer = (body: ReplyBody) => {
          if (event.reqId !== undefined) enqueue.emit(reply(event.reqId, body));
        };
        const binding = event.binding;
        const old = own(context.sessions, binding);
        if (old === undefined) return answer({ error: `no session bound to ${binding}` });
        const { [binding]: _, ...sessions } = context.sessions;
        enqueue.assign({ sessions });
        enqueue.emit(store({ op: 'unbind', binding }));
        enqueue.emit(bus({ type: 'session.reset', binding, session: old }));
        answer({ reset: 1, binding, session: old });
      }),

      bindSession: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.bindSession') return;
        if (own(context.sessions, event.binding) !== event.session) {
          enqueue.assign({ sessions: { ...context.sessions, [event.binding]: event.session } });
          enqueue.emit(store({ op: 'bind', binding: event.binding, session: event.session }));
          enqueue.emit(bus({ type: 'session.bound', binding: event.binding, session: event.session }));
        }
        if (event.reqId !== undefined) enqueue.emit(reply(event.reqId, { bound: 1, binding: event.binding, session: event.session }));
      }),

      unbindSession: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.unbindSession') return;
        const old = own(context.sessions, event.binding);
        if (old !== undefined) {
          const { [event.binding]: _, ...sessions } = context.sessions;
          enqueue.assign({ sessions });
          enqueue.emit(store({ op: 'unbind', binding: event.binding }));
        }
        if (event.reqId !== undefined) enqueue.emit(reply(event.reqId, { unbound: old === undefined ? 0 : 1, binding: event.binding }));
      }),

      dropQueued: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'cmd.dropQueued') return;
        const ref = own(context.bindings, event.binding);
        if (ref) enqueue.sendTo(ref, { type: 'binding.drop' });
        for (const slotRef of Object.values(context.slots)) enqueue.sendTo(slotRef, { type: 'slot.drop', binding: event.binding });
        if (event.reqId !== undefined) enqueue.emit(reply(event.reqId, { dropped: 1, binding: event.binding }));
      }),

      boot: hallSetup.enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'hall.boot') return;
        const slotsToDrain = new Set<string>();
        const bindingsToDrain = new Set<string>();
        for (const run of context.adopted) {
          const slot = slotOf(run.entry.name).slot;
          const explicit = explicitBinding(run.entry);
          enqueue({ type: 'ensureSlot', params: { name: slot } });
          slotsToDrain.add(slot);
          enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), {
            type: 'slot.adopt',
            ...run,
          });
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
          enqueue.sendTo(({ context: c }) => slotRefOf(c, slot), { type: 'slot.drain', at: event.at });
        }
        for (const binding of [...bindingsToDrain].sort()) {
          enqueue.sendTo(({ context: c }) => bindingRefOf(c, binding), { type: 'binding.drain', at: event.at });
        }
        for (const run of context.ended) {
          enqueue.emit(bus(doneEvent(run)));
          enqueue.emit(store({ op: 'end', runId: run.runId }));
        }
        enqueue.emit(bus({ type: 'hall.started', root: context.root }));
      }),
      beginStopping: hallSetup.enqueueActions(({ context, enqueue }) => {
        enqueue.emit(bus({ type: 'hall.stopping' }));
        for (const ref of Object.values(context.bindings)) enqueue.sendTo(ref, { type: 'binding.stop' });
        for (const ref of Object.values(context.slots)) enqueue.sendTo(ref, { type: 'slot.stop' });
      }),
      forceKill: hallSetup.enqueueActions(({ context, enqueue }) => {
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
      'slot.runCreated': { actions: 'noteRunCreated' },
      'run.spawned': { actions: 'reportSpawned' },
      'slot.runEnded': { actions: 'reportRunEnded' },
      'slot.queued': { actions: 'reportSlotQueued' },
      'binding.queued': { actions: 'reportBindingQueued' },
      'slot.dropped': { actions: 'reportDropped' },
      'binding.dropped': { actions: 'reportDropped' },
      'cmd.kill': { actions: 'signalRun' },
      'cmd.cancel': { actions: 'signalRun' },
      'cmd.queueFront': { actions: 'moveToFront' },
      'slot.moved': { actions: 'reportMoved' },
      'binding.moved': { actions: 'reportMoved' },
      'cmd.sessionReset': { actions: 'resetSession' },
      'cmd.dropQueued': { actions: 'dropQueued' },
      'cmd.bindSession': { actions: 'bindSession' },
      'cmd.unbindSession': { actions: 'unbindSession' },
    },
    states: {
      booting: {
        on: {
          'hall.boot': { target: 'running', actions: 'boot' },
          'hall.stop': 'stopping',
          // Before the boot nothing may overtake the missions a previous hall left waiting.
          'cmd.spawn': { actions: 'refuseWhileBooting' },
        },
      },
      running: {
        on: {
          'cmd.spawn': { actions: 'acceptSpawn' },
          'binding.pass': { actions: 'passToSlot' },
          'slot.offer': { actions: 'answerOffer' },
          'binding.offerAccepted': { actions: 'acceptBindingOffer' },
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
          'cmd.spawn': { actions: 'refuseWhileStopping' },
        },
      },
      stopped: {
        type: 'final',
        entry: emit({ type: 'hall.stopped' } as const),
      },
    },
  });
