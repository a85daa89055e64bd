/**
 * The dashboard's routes for what waits: `GET /api/queue` (the socket's
 * `queue` reply) and an operator's moves of one waiting mission,
 * `POST /api/queue/ID/drop` (the socket's `cancel` of a mission id) and
 * `POST /api/queue/ID/front` (`queue_front`). Each move is published first as
 * `dashboard.drop` / `dashboard.front` with `source: "dashboard"`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HallServices } from '../../ports/hall-services.js';
import { readJsonBody, sendJson } from './http-io.js';

const QUEUE_ACTION = /^\/api\/queue\/([^/]+)\/(drop|front)$/;

/** Answers `GET /api/queue`; false for any other route. */
export function serveQueueRead(services: HallServices, res: ServerResponse, url: URL): boolean {
  if (url.pathname !== '/api/queue') return false;
  sendJson(res, 200, services.queries.queue());
  return true;
}

function waits(services: HallServices, missionId: string): boolean {
  const reply = services.queries.queue();
  return 'queues' in reply && reply.queues.some((q) => q.missions.some((m) => m.mission_id === missionId));
}

/** Carries out a POST under /api/queue/ (already checked); false when no route matches. */
export async function serveQueueChange(services: HallServices, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const action = QUEUE_ACTION.exec(url.pathname);
  if (!action) return false;
  const body = await readJsonBody(req);
  if (!body.ok) {
    sendJson(res, 400, { error: body.error });
    return true;
  }
  const id = decodeURIComponent(action[1] ?? '');
  // A run id here would cancel a run: these routes move waiting missions only.
  if (!waits(services, id)) {
    sendJson(res, 404, { error: `no waiting mission ${id}: it started, was dropped, or never was` });
    return true;
  }
  if (action[2] === 'drop') {
    services.publish({ type: 'dashboard.drop', source: 'dashboard', id });
    sendJson(res, 200, await services.request({ type: 'cmd.cancel', id }));
  } else {
    services.publish({ type: 'dashboard.front', source: 'dashboard', id });
    sendJson(res, 200, await services.request({ type: 'cmd.queueFront', id }));
  }
  return true;
}
