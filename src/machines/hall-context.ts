/**
 * The hall root's context, input and events, and the typed action helper
 * that the hall's modules (routing, waiting, sessions, recovery, cluster)
 * write their actions with. The machine itself is hall.machine.ts.
 */
import { enqueueActions, type ParameterizedObject } from 'xstate';
import type { Mission } from '../domain/mission.js';
import { ownEntry as own } from '../domain/own-entry.js';
import type { RunIdCursor } from '../domain/run-id.js';
import type { BindingQueueReport } from './binding-queue.machine.js';
import type { RoomWait } from './hall-admission.js';
import type { BindingRef, SlotRef } from './hall-children.js';
import type { HallEmitted } from './hall-effects.js';
import type { RunPreparedReport, RunSpawnedReport } from './run.machine.js';
import type { AdoptedRun, SlotReport } from './slot.machine.js';
import type { EndedRun } from './hall-payloads.js';

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
  /** How many runs may live at once (`max_running`); absent = no limit. */
  maxRunning?: number;
}

/** The room under `max_running` (hall-admission.ts) lives in the context: `tickets` and `roomQueue`. */
export interface HallContext extends HallInput {
  slots: Record<string, SlotRef>;
  bindings: Record<string, BindingRef>;
  tickets: number;
  roomQueue: RoomWait[];
  /** Runs whose end another hall of the cluster reported: their end here says nothing more. */
  silenced: Record<string, true>;
  /** Run ids the cluster reserved for claimed missions (by mission id), unique across its halls. */
  reservedRunIds: Record<string, string>;
}

/** A mission's fields, its `name` checked before it comes here (the gateway): a safe raider name. */
export interface SpawnCommand extends Omit<Mission, 'id'> {
  type: 'cmd.spawn';
  reqId?: string;
  missionId: string;
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
  /**
   * A shared cluster's database gave this hall a mission to run (it claimed
   * it), with the session its binding continues there and the run id it reserved.
   */
  | { type: 'cluster.claimed'; entry: Mission; session?: string; runId: string; at: number }
  /** The session the cluster has bound to `binding` now (none: unbound), before a command acts on it. */
  | { type: 'cluster.session'; binding: string; session?: string }
  /** This hall was taken for lost and replaced: these runs of it were reported by another hall; stop them, silently. */
  | { type: 'cluster.replaced'; runIds: string[] }
  | { type: 'hall.stop' }
  | HallCommand
  | SlotReport
  | BindingQueueReport
  | RunPreparedReport
  | RunSpawnedReport;

/** The event of one type: what an action with typed params is given. */
export type EventOf<T extends HallEvent['type']> = Extract<HallEvent, { type: T }>;

/** The hall's own actions that its other actions enqueue by name. */
type EnsureAction = { type: 'ensureSlot'; params: { name: string } } | { type: 'ensureBinding'; params: { binding: string } };

/**
 * An action of the hall that is given what it needs as typed params (bound
 * where the transition names it), rather than reading and re-checking the
 * event: setup's own enqueueActions takes no params.
 */
export function hallAction<P extends ParameterizedObject['params'] | undefined>(
  collect: Parameters<
    typeof enqueueActions<HallContext, HallEvent, P, HallEvent, never, EnsureAction, never, 'shutdownGrace' | 'lastResort', HallEmitted>
  >[0],
) {
  return enqueueActions(collect);
}

/** What an action of the hall may enqueue: the helpers of its modules add to the action that calls them. */
export type HallEnqueue = Parameters<Parameters<typeof hallAction<undefined>>[0]>[0]['enqueue'];

/** The slot actor that `ensureSlot` made just before: a missing one is a bug in the hall, not an event to drop. */
export function slotRefOf(context: HallContext, slot: string): SlotRef {
  const ref = own(context.slots, slot);
  if (!ref) throw new Error(`the hall has no actor for slot ${slot}`);
  return ref;
}

/** The binding queue actor that `ensureBinding` made just before (see slotRefOf). */
export function bindingRefOf(context: HallContext, binding: string): BindingRef {
  const ref = own(context.bindings, binding);
  if (!ref) throw new Error(`the hall has no actor for binding ${binding}`);
  return ref;
}

/** The queue actor of a mission's explicit binding, if it has one and the actor exists. */
export function bindingRefOfEntry(context: HallContext, entry: Mission): BindingRef | undefined {
  return entry.binding !== undefined ? own(context.bindings, entry.binding) : undefined;
}
