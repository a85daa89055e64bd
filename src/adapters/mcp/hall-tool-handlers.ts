/**
 * The hall tools answered inside the hall by its command service: each tool
 * is a control command (spawn, ps, status, ...) run as the socket runs it,
 * without a connection. `send_telegram` is `telegram_reply`, which the
 * Telegram face answers (or the hall, when there is none).
 */
import type { HallServices } from '../../ports/hall-services.js';
import type { EnvelopeOf } from '../../ports/bus.js';
import { errorMessage } from '../../domain/error-message.js';
import { endedRun, endedRunInCopy, type EndedRun } from './ended-run.js';
import { refusal } from '../control/whereabouts.js';
import { DEFAULT_WAIT_S, replyResult, toolError, toolResult, type HallToolName, type ToolExtra, type ToolHandler } from './mcp-tools.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RecentOutcomes } from './recent-outcomes.js';

/** A client that asked for progress hears from a long wait this often, so its request timeout can be reset. */
export const WAIT_PROGRESS_MS = 10_000;

const MISSION_ID = /^m[0-9a-z]+-[0-9a-f]{12}$/;

export function hallToolHandler(
  services: HallServices,
  stopping: AbortSignal,
  recent: RecentOutcomes,
  progressMs: number = WAIT_PROGRESS_MS,
): ToolHandler {
  const handlers: Record<HallToolName, (args: Record<string, unknown>, extra: ToolExtra) => Promise<CallToolResult>> = {
    spawn_raider: async (a) => replyResult(await services.command('spawn', a)),
    list_raiders: async () => replyResult(await services.command('ps', {})),
    hall_status: async () => replyResult(await services.command('status', {})),
    cancel_raider: async (a) => replyResult(await services.command('cancel', a)),
    kill_raider: async (a) => replyResult(await services.command('kill', a)),
    raider_logs: async (a) => {
      const reply = await services.command('logs', a);
      if ('error' in reply) return toolError(reply.error);
      // The log as text only: a structured copy would double a large log.
      return { content: [{ type: 'text', text: reply.log === '' ? `(the log of ${String(a.id)} is empty)` : reply.log }] };
    },
    reset_session: async (a) => replyResult(await services.command('session_reset', a)),
    send_telegram: async (a) => replyResult(await services.command('telegram_reply', a)),
    // A shared hall asks the cluster where a run or mission is: a database that fails says so.
    wait_for_raider: (a, extra) =>
      waitForRaider(
        services,
        recent,
        String(a.id),
        typeof a.timeout_s === 'number' ? a.timeout_s : DEFAULT_WAIT_S,
        extra,
        stopping,
        progressMs,
      ).catch((err: unknown) => toolError(`cannot wait for ${String(a.id)}: ${errorMessage(err)}`)),
  };
  return (name, args, extra) => handlers[name](args, extra);
}

type Outcome =
  | { kind: 'done'; event: EnvelopeOf<'raider.done'> }
  | { kind: 'refused'; event: EnvelopeOf<'raider.refused'> }
  | { kind: 'timeout' }
  | { kind: 'aborted'; why: string };

/**
 * Subscribes first, then looks: a run that ends while the call subscribes is
 * seen either way (the hall reports `raider.done` before the run leaves the
 * registry, and both happen in one turn of the event loop).
 */
async function waitForRaider(
  services: HallServices,
  recent: RecentOutcomes,
  id: string,
  timeoutS: number,
  extra: ToolExtra,
  stopping: AbortSignal,
  progressMs: number,
): Promise<CallToolResult> {
  const byMission = MISSION_ID.test(id);
  let settle!: (outcome: Outcome) => void;
  const outcome = new Promise<Outcome>((resolve) => (settle = resolve));
  let runId: string | undefined = byMission ? undefined : id;
  const off = services.bus.subscribe({
    filter: 'raider.',
    receive: (e) => {
      if (e.type === 'raider.done' && (e.id === id || (byMission && e.mission_id === id))) settle({ kind: 'done', event: e });
      else if (byMission && e.type === 'raider.refused' && e.mission_id === id) settle({ kind: 'refused', event: e });
      else if (byMission && e.type === 'raider.spawned' && e.mission_id === id) runId = e.id;
    },
  });
  const timers: NodeJS.Timeout[] = [];
  const cleanups: Array<() => void> = [off];
  try {
    const ended = recent.get(id);
    if (ended)
      return ended.type === 'raider.refused'
        ? refusedResult(id, ended)
        : toolResult({ ...ended, ended_before_wait: true, source: 'event' });
    if (byMission) {
      const where = await missionState(services, id);
      const gone = where === null ? await services.queries.whereabouts(id) : null;
      if (gone?.kind === 'dropped') {
        const refused = refusal(id, gone, 'wait for');
        return toolError(refused.error, { ...refused });
      }
      if (where === null) {
        return toolError(
          `mission ${id} is neither waiting nor running (a mission id is known only until its run ends; wait for the run id instead)`,
        );
      }
      if (where.runId !== undefined) runId = where.runId;
    } else {
      const live = services.queries.attach(id);
      // A run on another hall of a shared cluster: its raider.done comes here on the bus, relayed.
      if ('error' in live && !(await runsElsewhere(services, id))) {
        const fromFiles = await endedRun(services.paths, id);
        if (fromFiles.found) return toolResult(fromFiles.done);
        const fromCluster = await endedElsewhere(services, id);
        return fromCluster?.found ? toolResult(fromCluster.done) : toolError(fromFiles.error);
      }
    }

    timers.push(setTimeout(() => settle({ kind: 'timeout' }), Math.round(timeoutS * 1000)));
    const abort = (why: string) => () => settle({ kind: 'aborted', why });
    for (const [signal, why] of [
      [extra.signal, 'the wait was cancelled'],
      [stopping, 'the hall is stopping'],
    ] as const) {
      if (signal.aborted) abort(why)();
      const listener = abort(why);
      signal.addEventListener('abort', listener, { once: true });
      cleanups.push(() => signal.removeEventListener('abort', listener));
    }
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      const started = Date.now();
      const tick = setInterval(() => {
        const waited = (Date.now() - started) / 1000;
        extra
          .sendNotification({
            method: 'notifications/progress',
            params: {
              progressToken: token,
              progress: Math.round(waited),
              total: timeoutS,
              message: `${runId ?? id} still ${runId ? 'running' : 'queued'}`,
            },
          })
          .catch(() => {});
      }, progressMs);
      timers.push(tick);
    }

    const result = await outcome;
    switch (result.kind) {
      case 'done':
        return toolResult({ ...result.event });
      case 'refused':
        return refusedResult(id, result.event);
      case 'timeout':
        return toolResult({
          id: runId ?? id,
          ...(byMission ? { mission_id: id } : {}),
          status: runId !== undefined ? 'still running' : 'still queued',
          timeout_s: timeoutS,
        });
      case 'aborted':
        return toolError(`stopped waiting for ${id}: ${result.why}`);
    }
    return toolError(`stopped waiting for ${id}`);
  } finally {
    for (const timer of timers) clearTimeout(timer);
    for (const cleanup of cleanups) cleanup();
  }
}

function refusedResult(id: string, event: EnvelopeOf<'raider.refused'>): CallToolResult {
  return toolError(`mission ${id} was refused (${event.reason}): ${event.error}; mission not run`, { ...event });
}

/**
 * Where a mission is: waiting in a queue (no run yet), or recorded as a started run; null when the hall does not know it.
 * On a shared cluster it may wait in the cluster's queue, or run on another hall.
 */
async function missionState(services: HallServices, missionId: string): Promise<{ runId?: string } | null> {
  const state = services.store.state;
  for (const run of state.runs.values()) if (run.entry.id === missionId) return { runId: run.id };
  for (const queues of [state.slotQueues, state.bindingQueues]) {
    for (const queue of queues.values()) if (queue.some((m) => m.id === missionId)) return {};
  }
  const shared = services.store.shared;
  if (!shared || !(await shared.faces.missionKnown(missionId))) return null;
  const remote = (await shared.remoteRuns()).find(({ run }) => run.entry.id === missionId);
  return remote ? { runId: remote.run.id } : {};
}

/** A run that ended on another hall of a shared cluster, from the cluster's copy of its events. */
async function endedElsewhere(services: HallServices, runId: string): Promise<EndedRun | null> {
  const events = await services.store.shared?.outputs.read(runId, 'events', 0);
  return events ? endedRunInCopy(runId, events) : null;
}

/** True when another hall of a shared cluster runs `runId` now. */
async function runsElsewhere(services: HallServices, runId: string): Promise<boolean> {
  const shared = services.store.shared;
  return shared !== undefined && (await shared.remoteRun(runId)) !== null;
}
