/**
 * The dashboard's API behind the security checks: reads answer from the
 * hall's queries and files; changes go to the hall as the control socket's
 * commands do, and each is published on the bus first as `dashboard.*`, with
 * `source: "dashboard"`, so every face sees who asked.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { HallServices } from '../../ports/hall-services.js';
import type { EventRing, EventStreams } from './event-stream.js';
import { readJsonBody, sendJson, sendJsonText } from './http-io.js';
import { serveQuestionChange, serveQuestionsRead } from './dashboard-questions-api.js';
import { serveQueueChange, serveQueueRead } from './dashboard-queue-api.js';
import type { QuestionFaces } from '../../ports/question-desk.js';
import { runFilterSchema, type ClusterRuns, type RunHistory } from './run-history.js';
import { clusterReply, remoteRunRows } from './cluster-view.js';
import { listSessions, readJournal } from './session-views.js';
import { hallTree, type OpenQuestions } from './tree-view.js';
import { chartData, chartQuerySchema, type ChartSources } from './chart-data.js';
import type { ActorStreams } from './actor-stream.js';

const spawnBodySchema = z.object({ name: z.string(), mission: z.string() });
const RUN_ACTION = /^\/api\/runs\/([^/]+)\/(cancel|kill)$/;
const RUN_PAGE = /^\/api\/runs\/([^/]+)$/;
const SESSION_PAGE = /^\/api\/sessions\/([^/]+)$/;
/** The most run ids one `/api/missions` request may name (a Runs table shows at most 500 rows). */
const MISSIONS_ASKED_MAX = 500;

export interface DashboardApiDeps {
  services: HallServices;
  history: RunHistory;
  ring: EventRing;
  streams: EventStreams;
  /** One live actor's state and events each, for the statechart page. */
  actorStreams: ActorStreams;
  /** Null unless `dashboard.questions: true`. */
  questions: QuestionFaces | null;
  /** The open questions the live tree shows, from the bus. */
  openQuestions: OpenQuestions;
  /** The charts' figures beyond the run history. */
  charts: ChartSources;
}

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
}

/** In a shared cluster: this hall's id and the other halls' runs, for the Runs table (a query of the database). */
export async function clusterRuns(services: HallServices): Promise<ClusterRuns | undefined> {
  const shared = services.store.shared;
  return shared ? { hall: shared.hallId, remote: await remoteRunRows(shared) } : undefined;
}

/**
 * What the page needs to draw its first view, inlined in it: the answers of
 * `/api/status`, `/api/cluster` and `/api/runs` (no filter), so a first load
 * waits for no request after its scripts; `seq`: the newest bus event they
 * include, where the page's event stream takes up (`/api/events?since=SEQ`).
 */
export async function firstData(
  deps: DashboardApiDeps,
): Promise<{ status: unknown; cluster: unknown; runs: unknown; raiders: string[]; seq: number }> {
  const { services } = deps;
  const [cluster, runs] = await Promise.all([clusterReply(services.store.shared), clusterRuns(services)]);
  // Taken last, in the same turn as the lists: the page's event stream starts after it, so nothing falls between.
  return {
    status: services.queries.status(),
    cluster,
    runs: deps.history.list(runFilterSchema.parse({}), runs),
    raiders: raiderNames(services),
    seq: deps.ring.latest,
  };
}

/** The raiders `.raider-hall.yml` names, in its order: the Spawn form offers them. */
function raiderNames(services: HallServices): string[] {
  return Object.keys(services.config.raiders);
}

/** The missions of the runs `ids` names (comma-separated) that the hall knows, by run id. */
function missionsOf(history: RunHistory, url: URL): { missions: Record<string, string> } | { error: string } {
  const ids = (url.searchParams.get('ids') ?? '').split(',').filter((id) => id !== '');
  if (ids.length === 0 || ids.length > MISSIONS_ASKED_MAX)
    return { error: `missions takes ids=ID,ID...: between 1 and ${MISSIONS_ASKED_MAX} run ids` };
  return { missions: history.missionsOf(ids) };
}

/** Answers a GET under /api/; false when no route matches. */
export async function serveApiRead(deps: DashboardApiDeps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const { services, history } = deps;
  if (url.pathname === '/api/status') {
    sendJson(res, 200, services.queries.status());
    return true;
  }
  if (url.pathname === '/api/runs') {
    const filter = runFilterSchema.safeParse(Object.fromEntries(url.searchParams));
    if (!filter.success) sendJson(res, 400, { error: issues(filter.error) });
    else sendJson(res, 200, history.list(filter.data, await clusterRuns(services)));
    return true;
  }
  if (url.pathname === '/api/raiders') {
    sendJson(res, 200, { raiders: raiderNames(services) });
    return true;
  }
  if (url.pathname === '/api/missions') {
    const reply = missionsOf(history, url);
    sendJson(res, 'error' in reply ? 400 : 200, reply);
    return true;
  }
  if (url.pathname === '/api/cluster') {
    sendJson(res, 200, await clusterReply(services.store.shared));
    return true;
  }
  if (url.pathname === '/api/events' && url.searchParams.get('poll') === '1') {
    const since = url.searchParams.get('since') ?? '';
    if (!/^\d+$/.test(since)) sendJson(res, 400, { error: 'poll=1 needs since=SEQ: the seq of the newest event the page has' });
    else sendJsonText(res, 200, deps.ring.batchSince(Number(since)));
    return true;
  }
  if (url.pathname === '/api/events') {
    // A reconnect says what it saw in Last-Event-ID; a page's first connection, with `since`, the seq of its inlined data.
    const last = req.headers['last-event-id'] ?? url.searchParams.get('since') ?? undefined;
    deps.streams.serve(res, typeof last === 'string' ? last : undefined);
    return true;
  }
  if (url.pathname === '/api/actors') {
    sendJson(res, 200, { actors: services.actors.list() });
    return true;
  }
  if (url.pathname === '/api/actors/stream') {
    const id = url.searchParams.get('id') ?? '';
    if (id === '') sendJson(res, 400, { error: 'actors/stream takes id=ACTOR: an id from GET /api/actors' });
    else deps.actorStreams.serve(res, id, { batch: url.searchParams.get('batch') === '1' });
    return true;
  }
  if (serveQueueRead(services, res, url) || serveQuestionsRead(deps.questions, res, url)) return true;
  if (url.pathname === '/api/charts') {
    const query = chartQuerySchema.safeParse(Object.fromEntries(url.searchParams));
    if (!query.success) sendJson(res, 400, { error: issues(query.error) });
    else sendJson(res, 200, chartData(history, deps.charts, query.data));
    return true;
  }
  if (url.pathname === '/api/tree') {
    // `actors`: every live actor, each with a statechart the page links to.
    sendJson(res, 200, { ...hallTree(services.queries, deps.openQuestions, await clusterRuns(services)), actors: services.actors.list() });
    return true;
  }
  if (url.pathname === '/api/sessions') {
    sendJson(res, 200, listSessions(services.paths.root, services.queries));
    return true;
  }
  const sessionPage = SESSION_PAGE.exec(url.pathname);
  if (sessionPage) {
    const journal = readJournal(services.paths.root, services.queries, decodeURIComponent(sessionPage[1] ?? ''));
    if (!journal) sendJson(res, 404, { error: 'no such session: its journal is not under .raider/sessions/' });
    else sendJson(res, 200, journal);
    return true;
  }
  const page = RUN_PAGE.exec(url.pathname);
  if (page) {
    const id = decodeURIComponent(page[1] ?? '');
    const detail = await history.detail(id);
    // A mission id, a dropped mission, a run whose events file is gone: the 404 says which.
    if (!detail) sendJson(res, 404, await services.queries.refusal(id, 'show'));
    else sendJson(res, 200, { ...detail, timeline: deps.ring.about(id) });
    return true;
  }
  return false;
}

/** Carries out a POST under /api/ (already checked); false when no route matches. */
export async function serveApiChange(deps: DashboardApiDeps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const { services } = deps;
  const action = RUN_ACTION.exec(url.pathname);
  if (url.pathname !== '/api/spawn' && !action)
    return (await serveQueueChange(services, req, res, url)) || serveQuestionChange(services, deps.questions, req, res, url);
  const body = await readJsonBody(req);
  if (!body.ok) {
    sendJson(res, 400, { error: body.error });
    return true;
  }
  if (action) {
    const id = decodeURIComponent(action[1] ?? '');
    const verb = action[2] === 'kill' ? 'kill' : 'cancel';
    services.publish({ type: `dashboard.${verb}`, source: 'dashboard', id });
    // As the socket's command: a run that ended, or a mission id, is answered with what is true of it.
    sendJson(res, 200, await services.command(verb, { id }));
    return true;
  }
  const spawn = spawnBodySchema.safeParse(body.value);
  if (!spawn.success) {
    sendJson(res, 400, { error: `spawn takes {"name": RAIDER, "mission": TEXT}: ${issues(spawn.error)}` });
    return true;
  }
  const missionId = services.newMissionId();
  services.publish({
    type: 'dashboard.spawn',
    source: 'dashboard',
    name: spawn.data.name,
    mission: spawn.data.mission,
    mission_id: missionId,
  });
  sendJson(
    res,
    200,
    await services.request({ type: 'cmd.spawn', missionId, name: spawn.data.name, mission: spawn.data.mission, at: Date.now() }),
  );
  return true;
}
