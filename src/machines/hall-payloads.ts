/**
 * What the hall says, as pure functions of what it heard: the event-bus
 * events, replies and store operations its actions emit. Each field and its
 * presence is a public contract (docs/protocol.md), so the shapes are built
 * here, once, and tested directly; the hall machine only decides which to
 * emit and when.
 */
import type { Mission } from '../domain/mission.js';
import type { RunOutcome } from '../domain/outcome.js';
import type { HallBusEvent, RaiderDoneEvent } from '../protocol/events.js';
import type { CancelQueuedReply, QueueFrontReply, SpawnQueuedReply } from '../protocol/replies.js';
import type { BindingQueueReport } from './binding-queue.machine.js';
import type { HallEmitted, LiveRun, ReplyBody, StoreOp } from './hall-effects.js';
import type { RunOutput, RunSpawnedReport } from './run.machine.js';
import type { DropReason, SlotReport } from './slot.machine.js';
import { definedFields } from '../domain/defined-fields.js';
import { AGENT_SESSIONS_NS, type AgentSessionRecord } from '../protocol/agent-session.js';

type BusEventOf<T extends HallBusEvent['type']> = Extract<HallBusEvent, { type: T }>;
type RefusedRun = Extract<RunOutput, { kind: 'refused' }>;
/** A slot's report that a mission waits in its queue. */
export type SlotQueued = Extract<SlotReport, { type: 'slot.queued' }>;
type BindingQueued = Extract<BindingQueueReport, { type: 'binding.queued' }>;

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

export const busEffect = (event: HallBusEvent): HallEmitted => ({ type: 'bus', event });
export const storeEffect = (op: StoreOp): HallEmitted => ({ type: 'store', op });
export const replyEffect = (reqId: string, body: ReplyBody): HallEmitted => ({ type: 'reply', reqId, body });

/** The binding and session a run continues, or nothing when it runs unbound. */
function boundOf(run: { binding?: string; session?: string }): { session: string; binding: string } | undefined {
  return run.binding !== undefined && run.session !== undefined ? { session: run.session, binding: run.binding } : undefined;
}

/**
 * What the bus hears of a run's end, live or found ended at start-up: a bound
 * run whose raider could not continue the binding's session (an ACP agent
 * that lost it) says so first, as `hall.session_error`, then `raider.done`.
 */
export function endEvents(run: EndedRun & { cancelRequested?: boolean }): HallBusEvent[] {
  const error = run.outcome.session_error;
  const lost: HallBusEvent[] =
    error !== undefined && run.binding !== undefined ? [{ type: 'hall.session_error', binding: run.binding, error, id: run.runId }] : [];
  return [...lost, doneEvent(run)];
}

/**
 * The store operations of a run's end: the ACP agent session a bound run went
 * on with, and its cost so far when the agent said one, are recorded for the
 * binding's next run (docs/agents.md, "Sessions across runs") before the end
 * frees the binding, then the end itself.
 */
export function endOps(run: EndedRun): StoreOp[] {
  const opened = run.outcome.agent_session;
  const end: StoreOp = { op: 'end', runId: run.runId };
  if (opened === undefined || run.session === undefined) return [end];
  const cost = run.outcome.usage?.cost;
  const value: AgentSessionRecord = { v: 1, agent: opened.agent, session: opened.id, ...definedFields({ cost }) };
  return [{ op: 'set', ns: AGENT_SESSIONS_NS, key: run.session, value }, end];
}

/** The `raider.done` event of a run, live or found ended at start-up. */
export function doneEvent(run: EndedRun & { cancelRequested?: boolean }): RaiderDoneEvent {
  const o = run.outcome;
  return {
    type: 'raider.done',
    id: run.runId,
    slot: run.slot,
    pid: run.pid,
    exit_code: o.exit_code,
    signaled: o.signaled,
    status: o.status,
    ...definedFields({ response: o.response, error: o.error, hall_stop: o.hall_stop, session: o.session, usage: o.usage }),
    ...(run.binding !== undefined && run.session !== undefined ? { binding: run.binding } : {}),
    mission_id: run.entry.id,
    ...(run.cancelRequested ? { cancel_requested: true } : {}),
    ...(o.worktree !== undefined
      ? {
          worktree: o.worktree.worktree,
          branch: o.worktree.branch,
          base: o.worktree.base,
          commits: o.worktree.commits,
          changed: o.worktree.changed,
          wip_commit: o.worktree.wip,
          worktree_kept: o.worktree.kept,
        }
      : {}),
  };
}

/** A started run as `ps`, `status` and `attach` show it. */
export function liveRunOf(report: RunSpawnedReport): LiveRun {
  return {
    id: report.runId,
    slot: report.slot,
    base_name: report.baseName,
    pid: report.pid,
    mission: report.entry.mission,
    mission_id: report.entry.id,
    ...boundOf(report),
    events_path: report.eventsPath,
    log_path: report.logPath,
    started_at: report.startedAt,
  };
}

export function spawnedEvent(report: RunSpawnedReport): BusEventOf<'raider.spawned'> {
  return {
    type: 'raider.spawned',
    id: report.runId,
    pid: report.pid,
    slot: report.slot,
    base_name: report.baseName,
    mission_id: report.entry.id,
    ...boundOf(report),
  };
}

/** The answer to a spawn whose run started. */
export function spawnedReply(report: RunSpawnedReport): ReplyBody {
  return {
    id: report.runId,
    pid: report.pid,
    slot: report.slot,
    events_path: report.eventsPath,
    mission_id: report.entry.id,
    ...boundOf(report),
  };
}

export function refusedEvent(out: RefusedRun): BusEventOf<'raider.refused'> {
  return {
    type: 'raider.refused',
    status: 'refused',
    slot: out.slot,
    name: out.entry.name,
    ...definedFields({ binding: out.binding }),
    reason: out.reason,
    error: out.error,
    queued: out.queued,
    mission_id: out.entry.id,
  };
}

export function refusedReply(out: RefusedRun): ReplyBody {
  return { status: 'refused', reason: out.reason, error: out.error };
}

/** The answer to a spawn whose raider could not be started at all. */
export function unstartedReply(outcome: RunOutcome): ReplyBody {
  return { error: `command failed: ${outcome.error ?? 'the raider could not be started'}` };
}

export function slotQueuedEvent(queued: SlotQueued): BusEventOf<'raider.queued'> {
  return { type: 'raider.queued', slot: queued.slot, queue_depth: queued.depth, mission_id: queued.entry.id };
}

/**
 * Every queued spawn's reply. A new mission waits last in its queue, so its
 * place (`position`, as `queue` numbers it) is the queue's depth. Keys in
 * sorted order: the socket writes them with the native JSON writer
 * (protocol/canonical-json.ts).
 */
function queuedReply(missionId: string, slot: string, depth: number, binding: string | undefined, position = depth): SpawnQueuedReply {
  const body = { mission_id: missionId, position, queue_depth: depth, queued: 1 as const, slot };
  return binding !== undefined ? { binding, ...body } : body;
}

export function slotQueuedReply(queued: SlotQueued): ReplyBody {
  return queuedReply(queued.entry.id, queued.slot, queued.depth, undefined);
}

/**
 * A mission that waits before any queue actor holds it: for room under
 * `max_running` (no binding named), or in a shared cluster's queue (its binding, if any).
 */
export function missionQueuedEvent(entry: Mission, depth: number, binding: string | undefined): BusEventOf<'raider.queued'> {
  return {
    type: 'raider.queued',
    slot: entry.name,
    ...definedFields({ binding }),
    queue_depth: depth,
    mission_id: entry.id,
  };
}

/** `position` other than `depth`: a mission that waits for room is numbered within its slot's queue. */
export function missionQueuedReply(entry: Mission, depth: number, binding: string | undefined, position = depth): SpawnQueuedReply {
  return queuedReply(entry.id, entry.name, depth, binding, position);
}

/** A mission waiting for its binding is reported under its raider name, with the binding. */
export function bindingQueuedEvent(queued: BindingQueued): BusEventOf<'raider.queued'> {
  return {
    type: 'raider.queued',
    slot: queued.entry.name,
    binding: queued.binding,
    queue_depth: queued.depth,
    mission_id: queued.entry.id,
  };
}

export function bindingQueuedReply(queued: BindingQueued): ReplyBody {
  return queuedReply(queued.entry.id, queued.entry.name, queued.depth, queued.binding);
}

export function droppedEvent(entry: Mission, reason: DropReason): BusEventOf<'raider.dropped'> {
  return {
    type: 'raider.dropped',
    mission_id: entry.id,
    slot: entry.name,
    ...definedFields({ binding: entry.binding }),
    reason,
  };
}

/** The answer to a cancel that took a waiting mission out of its queue. */
export function cancelledWaitingReply(entry: Mission): CancelQueuedReply {
  return {
    dropped: 1,
    mission_id: entry.id,
    slot: entry.name,
    ...definedFields({ binding: entry.binding }),
  };
}

/** A waiting mission an operator moved to the front of its queue (binding: the binding queue it waits in). */
export function movedEvent(entry: Mission, binding: string | undefined, from: number): BusEventOf<'raider.moved'> {
  return {
    type: 'raider.moved',
    mission_id: entry.id,
    slot: entry.name,
    ...definedFields({ binding }),
    position: 1,
    from,
  };
}

/** The answer to a queue_front that moved its mission. */
export function movedReply(entry: Mission, binding: string | undefined, from: number): QueueFrontReply {
  return { moved: 1, mission_id: entry.id, slot: entry.name, ...definedFields({ binding }), position: 1, from };
}
