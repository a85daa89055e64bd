/**
 * The hall tools answered inside the hall, from its services: the same
 * requests and queries the control socket commands make. `send_telegram`
 * goes through the control socket's `telegram_reply`, which the Telegram face
 * answers (or the hall, when there is none).
 */
import net from 'node:net';
import type { HallServices } from '../../actors/hall-adapter.js';
import type { Envelope } from '../control/event-bus.js';
import { endedRun } from './ended-run.js';
import {
  DEFAULT_WAIT_S,
  replyResult,
  toolError,
  toolResult,
  type HallToolName,
  type ToolExtra,
  type ToolHandler,
} from './mcp-tools.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RecentOutcomes } from './recent-outcomes.js';

type Reply = Record<string, unknown>;

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
    spawn_raider: async (a) =>
      replyResult(
        await services.request({
          type: 'cmd.spawn',
          missionId: services.newMissionId(),
          name: a.name,
          mission: a.mission,
          ...(a.binding !== undefined ? { binding: a.binding } : {}),
          at: Date.now(),
        }),
      ),
    list_raiders: async () => replyResult(services.queries.ps()),
    hall_status: async () => replyResult(services.queries.status()),
    cancel_raider: async (a) => replyResult(await services.request({ type: 'cmd.cancel', id: a.id })),
    kill_raider: async (a) => replyResult(await services.request({ type: 'cmd.kill', id: a.id })),
    raider_logs: async (a) => {
      const reply = await services.queries.logs(a.id);
      if (typeof reply.error === 'string') return toolError(reply.error);
      // The log as text only: a structured copy would double a large log.
      const log = String(reply.log ?? '');
      return { content: [{ type: 'text', text: log === '' ? `(the log of ${String(a.id)} is empty)` : log }] };
    },
    reset_session: async (a) => replyResult(await services.request({ type: 'cmd.sessionReset', binding: a.binding })),
    send_telegram: async (a) =>
      replyResult(
        await controlCommand(services.paths.socket, {
          cmd: 'telegram_reply',
          bot: a.bot,
          chat_id: a.chat_id,
          text: a.text,
          ...(a.message_thread_id !== undefined ? { message_thread_id: a.message_thread_id } : {}),
        }),
      ),
    wait_for_raider: (a, extra) => waitForRaider(services, recent, String(a.id), typeof a.timeout_s === 'number' ? a.timeout_s : DEFAULT_WAIT_S, extra, stopping, progressMs),
  };
  return (name, args, extra) => handlers[name](args, extra);
}

type Outcome = { kind: 'done'; event: Envelope } | { kind: 'refused'; event: Envelope } | { kind: 'timeout' } | { kind: 'aborted'; why: string };

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
    deliver: (_line, e) => {
      if (e.type === 'raider.done' && (e.id === id || (byMission && e.mission_id === id))) settle({ kind: 'done', event: e });
      else if (byMission && e.type === 'raider.refused' && e.mission_id === id) settle({ kind: 'refused', event: e });
      else if (byMission && e.type === 'raider.spawned' && e.mission_id === id && typeof e.id === 'string') runId = e.id;
    },
  });
  const timers: NodeJS.Timeout[] = [];
  const cleanups: Array<() => void> = [off];
  try {
    const ended = recent.get(id);
    if (ended) return ended.type === 'raider.refused' ? refusedResult(id, ended) : toolResult({ ...ended, ended_before_wait: true, source: 'event' });
    if (byMission) {
      const where = missionState(services, id);
      if (where === null) {
        return toolError(`mission ${id} is neither waiting nor running (a mission id is known only until its run ends; wait for the run id instead)`);
      }
      if (where.runId !== undefined) runId = where.runId;
    } else {
      const live = services.queries.attach(id);
      if (typeof live.error === 'string') {
        const fromFiles = await endedRun(services.paths, id);
        return fromFiles.found ? toolResult(fromFiles.done) : toolError(fromFiles.error);
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
            params: { progressToken: token, progress: Math.round(waited), total: timeoutS, message: `${runId ?? id} still ${runId ? 'running' : 'queued'}` },
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

function refusedResult(id: string, event: Envelope): CallToolResult {
  return toolError(`mission ${id} was refused (${String(event.reason)}): ${String(event.error)}; mission not run`, { ...event });
}

/** Where a mission is: waiting in a queue (no run yet), or recorded as a started run; null when the hall does not know it. */
function missionState(services: HallServices, missionId: string): { runId?: string } | null {
  const state = services.store.state;
  for (const run of state.runs.values()) if (run.entry.id === missionId) return { runId: run.id };
  for (const queues of [state.slotQueues, state.bindingQueues]) {
    for (const queue of queues.values()) if (queue.some((m) => m.id === missionId)) return {};
  }
  return null;
}

/** One command on the hall's control socket, one reply line. */
function controlCommand(socketPath: string, payload: Reply): Promise<Reply> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    let buffer = '';
    let settled = false;
    const finish = (reply: Reply) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(reply);
    };
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ type: 'command', payload })}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      try {
        finish(JSON.parse(buffer.slice(0, nl)) as Reply);
      } catch {
        finish({ error: `invalid reply from the hall: ${buffer.slice(0, 200)}` });
      }
    });
    socket.on('error', (err) => finish({ error: `cannot reach the hall's control socket ${socketPath}: ${err.message}` }));
    socket.on('close', () => finish({ error: 'no response from the hall' }));
  });
}
