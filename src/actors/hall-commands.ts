/**
 * The command table: each control command (from the socket, or from a face
 * inside the hall such as MCP) wired to the hall actor through the gateway,
 * or to the read-only queries. Faces add the commands they answer
 * (`telegram_reply`, ...) over these defaults.
 */
import { clusterQueue, clusterStatus } from '../adapters/control/cluster-waiting.js';
import { bySlotThenId } from '../adapters/control/queries.js';
import type { HallQueries } from '../ports/hall-queries.js';
import { newMissionId } from '../adapters/storage/mission-id.js';
import type { CommandHandlers } from '../protocol/command-service.js';
import type { HallAdapter } from '../ports/hall-services.js';
import type { SharedQueue } from '../ports/cluster-queue.js';
import type { BusEvent } from '../machines/hall-effects.js';
import { cancelledWaitingReply, droppedEvent, movedEvent, movedReply } from '../machines/hall-payloads.js';
import { type ErrorReply, refusedWith, type ReplyTo, runNotFound } from '../protocol/replies.js';
import type { RefusedVerb } from '../ports/hall-queries.js';
import type { HallGateway } from './hall-gateway.js';
import { ageSeconds } from '../adapters/control/waiting-missions.js';
import type { RunOutputMirror } from './run-output-mirror.js';
import { parseRunId } from '../domain/run-id.js';
import { definedFields } from '../domain/defined-fields.js';

export function hallCommands(
  gateway: HallGateway,
  queries: HallQueries,
  worktrees: Pick<CommandHandlers, 'worktree_list' | 'worktree_rm' | 'worktree_prune'>,
  shared?: {
    queue: SharedQueue;
    mirror: RunOutputMirror;
    publish: (event: BusEvent) => void;
    /** Tells the hall actor the session the cluster has bound to a binding (none: unbound). */
    learnSession: (binding: string, session: string | undefined) => void;
  },
): CommandHandlers {
  const commands: CommandHandlers = {
    // Checked against the spawn schema by the command service already.
    spawn: (p) =>
      gateway.spawnChecked({
        type: 'cmd.spawn',
        missionId: newMissionId(),
        name: p.name,
        mission: p.mission,
        ...definedFields({ binding: p.binding }),
        at: Date.now(),
      }),
    ps: () => queries.ps(),
    status: () => queries.status(),
    attach: (p) => queries.attach(p.id),
    queue: (p) => queries.queue(p.slot),
    queue_front: (p) => gateway.request({ type: 'cmd.queueFront', id: p.id }),
    sessions: () => queries.sessions(),
    logs: (p) => queries.logs(p.id),
    kill: (p) => gateway.request({ type: 'cmd.kill', id: p.id }),
    cancel: (p) => gateway.request({ type: 'cmd.cancel', id: p.id }),
    session_reset: (p) => gateway.request({ type: 'cmd.sessionReset', binding: p.binding }),
    ...worktrees,
    telegram_reply: () => ({ error: 'telegram not configured in .raider-hall.yml' }),
    answer: () => ({
      error:
        "no permission question is open here: set questions: { socket: true } (or questions.dashboard, or a Telegram bot's questions: true) in .raider-hall.yml for runs no ACP client watches to ask",
    }),
  };
  if (shared) Object.assign(commands, clusterCommands({ ...commands }, shared, queries));
  explainRefusals(commands, queries);
  return commands;
}

/**
 * An id that names no run (here or, in a shared cluster, on another hall) is
 * answered with what is true of it: the run ended, the id is a waiting
 * mission, the mission was dropped; "not found" only when the hall knows nothing of it.
 */
function explainRefusals(commands: CommandHandlers, queries: HallQueries): void {
  const { cancel, kill, attach, logs } = commands;
  const explain = async <R extends object>(reply: R, id: string, verb: RefusedVerb): Promise<R | ErrorReply> =>
    refusedWith(reply, 'run_not_found') ? queries.refusal(id, verb) : reply;
  commands.cancel = async (p) => explain(await cancel(p), p.id, 'cancel');
  commands.kill = async (p) => explain(await kill(p), p.id, 'kill');
  commands.attach = async (p) => explain(await attach(p), p.id, 'attach');
  commands.logs = async (p) => explain(await logs(p), p.id, 'logs');
}

/**
 * In a shared cluster `ps` and `status` list the runs of every hall (each
 * naming its hall), `queue` and `status` the missions waiting in the
 * cluster's queue; `cancel` and `kill` reach a run on another hall through
 * the database: the hall that runs it signals it on its own host; `attach`
 * and `logs` of a run on another hall read what that hall shipped to the
 * cluster (see run-output-shipper.ts and run-output-mirror.ts).
 */
function clusterCommands(
  local: CommandHandlers,
  cluster: {
    queue: SharedQueue;
    mirror: RunOutputMirror;
    publish: (event: BusEvent) => void;
    learnSession: (binding: string, session: string | undefined) => void;
  },
  queries: HallQueries,
): Partial<CommandHandlers> {
  const { queue: shared, mirror, publish } = cluster;
  const cancelElsewhere = async (id: string): Promise<ReplyTo<'cancel'>> => {
    const remote = await shared.signal(id, 'cancel');
    if (remote.kind === 'run') return { cancelled: 1, id };
    if (remote.kind === 'unknown') return runNotFound();
    publish(droppedEvent(remote.entry, 'cancelled'));
    return cancelledWaitingReply(remote.entry);
  };
  /** A run that ended on another hall: a complete copy of what it shipped, for the client to replay. */
  const endedElsewhere = async (id: string): Promise<ReplyTo<'attach'> | null> => {
    const parsed = parseRunId(id);
    const hall = parsed === null ? null : await shared.outputs.shippedBy(id);
    if (parsed === null || hall === null) return null;
    await mirror.open(id);
    const copy = await mirror.finish(id);
    if (copy === null) return null;
    return { id, slot: parsed.slot, pid: 0, log_path: copy.logPath, events_path: copy.eventsPath, hall, ended: true };
  };
  const killElsewhere = async (id: string): Promise<ReplyTo<'kill'>> =>
    (await shared.signal(id, 'kill')).kind === 'run' ? { killed: 1, id } : runNotFound();
  return {
    ps: async () => {
      const mine = await local.ps({ cmd: 'ps' });
      if ('error' in mine) return mine;
      const own = mine.raiders.map((r) => ({ ...r, hall: shared.hallId }));
      const others = (await shared.remoteRuns()).map(({ hall, run }) => ({
        slot: run.slot,
        pid: run.pid ?? 0,
        base_name: run.base_name,
        mission: run.entry.mission,
        id: run.id,
        ...definedFields({ session: run.session }),
        ...boundTo(run),
        hall,
      }));
      return { raiders: [...own, ...others].sort(bySlotThenId) };
    },
    queue: async (p) => clusterQueue(queries.waitingState(), await shared.queued(), Date.now(), p.slot),
    status: async () => {
      const now = Date.now();
      const mine = clusterStatus(queries.status(), queries.waitingState(), await shared.queued(), now);
      const others = (await shared.remoteRuns()).map(({ hall, run }) => ({
        id: run.id,
        slot: run.slot,
        pid: run.pid ?? 0,
        age: ageSeconds(now, run.started_at),
        ...boundTo(run),
        hall,
      }));
      const runs = [...mine.runs.map((r) => ({ ...r, hall: shared.hallId })), ...others].sort(
        (a, b) => b.age - a.age || (a.id < b.id ? -1 : 1),
      );
      return { ...mine, hall: shared.hallId, running: runs.length, slots: [...new Set(runs.map((r) => r.slot))].sort(), runs };
    },
    attach: async (p) => {
      const mine = await local.attach(p);
      if (!('error' in mine)) return { ...mine, hall: shared.hallId };
      if (!refusedWith(mine, 'run_not_found')) return mine;
      const remote = await shared.remoteRun(p.id);
      if (remote === null) return p.ended === true ? ((await endedElsewhere(p.id)) ?? mine) : mine;
      const { run, hall } = remote;
      const copy = await mirror.open(run.id);
      return {
        id: run.id,
        slot: run.slot,
        pid: run.pid ?? 0,
        ...definedFields({ session: run.session }),
        ...boundTo(run),
        log_path: copy.logPath,
        events_path: copy.eventsPath,
        hall,
      };
    },
    // Another hall may have bound the binding, or reset it, since this hall last heard: the reset acts on the cluster's binding.
    session_reset: async (p) => {
      cluster.learnSession(p.binding, (await shared.sessionOf(p.binding)) ?? undefined);
      return local.session_reset(p);
    },
    logs: async (p) => {
      const mine = await local.logs(p);
      if (!refusedWith(mine, 'run_not_found')) return mine;
      const shipped = await shared.outputs.read(p.id, 'log', 0);
      return shipped === null ? mine : { log: shipped.toString('utf8') };
    },
    // Missions wait in the cluster's queue, not in this hall's: they move there.
    queue_front: async (p) => {
      const moved = await shared.front(p.id);
      if (moved === null) return local.queue_front(p);
      const { entry, binding, from } = moved;
      if (from > 1) publish(movedEvent(entry, binding, from));
      return movedReply(entry, binding, from);
    },
    cancel: async (p) => {
      const answer = await local.cancel(p);
      return refusedWith(answer, 'run_not_found') ? cancelElsewhere(p.id) : answer;
    },
    kill: async (p) => {
      const answer = await local.kill(p);
      return refusedWith(answer, 'run_not_found') ? killElsewhere(p.id) : answer;
    },
  };
}

/** Lets each face answer its own commands: a face's handler replaces the default one. */
export function addFaceCommands(commands: CommandHandlers, adapters: readonly HallAdapter[]): void {
  for (const adapter of adapters) Object.assign(commands, adapter.commands ?? {});
}

/** A remote run's binding, named only with its session (as this hall's own runs are listed). */
function boundTo(run: { binding?: string; session?: string }): { binding?: string } {
  return run.binding !== undefined && run.session !== undefined ? { binding: run.binding } : {};
}
