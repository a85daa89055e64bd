/**
 * The command table: each control command (from the socket, or from a face
 * inside the hall such as MCP) wired to the hall actor through the gateway,
 * or to the read-only queries. Faces add the commands they answer
 * (`telegram_reply`, ...) over these defaults.
 */
import type { HallQueries } from '../adapters/control/queries.js';
import { newMissionId } from '../adapters/storage/mission-id.js';
import type { CommandHandlers } from '../protocol/command-service.js';
import type { HallAdapter } from '../ports/hall-services.js';
import type { HallGateway } from './hall-gateway.js';

export function hallCommands(gateway: HallGateway, queries: HallQueries): CommandHandlers {
  return {
    spawn: (p) =>
      gateway.request({
        type: 'cmd.spawn',
        missionId: newMissionId(),
        name: p.name,
        mission: p.mission,
        ...(p.binding !== undefined ? { binding: p.binding } : {}),
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
    telegram_reply: () => ({ error: 'telegram not configured in .raider-hall.yml' }),
    answer: () => ({
      error: 'no permission question is open here: set dashboard.questions: true in .raider-hall.yml for runs no ACP client watches to ask',
    }),
  };
}

/** Lets each face answer its own commands: a face's handler replaces the default one. */
export function addFaceCommands(commands: CommandHandlers, adapters: readonly HallAdapter[]): void {
  for (const adapter of adapters) Object.assign(commands, adapter.commands ?? {});
}
