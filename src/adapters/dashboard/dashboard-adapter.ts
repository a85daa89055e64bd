/**
 * The hall's web face (opt-in: `dashboard: { listen: ... }` in
 * .raider-hall.yml). It serves the page and its API over node:http; every
 * request passes the checks of http-guard.ts first. The bound URL is in
 * `status` and, with a login token made anew at each start, in the 0600 file
 * `.raider-hall/dashboard.json` that `raider hall dashboard` reads.
 */
import { randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { HallAdapter, HallAdapterFactory, HallServices } from '../../ports/hall-services.js';
import type { DashboardConfig } from '../../ports/hall-config.js';
import { firstData, serveApiChange, serveApiRead, type DashboardApiDeps } from './dashboard-api.js';
import { removeDashboardFile, writeDashboardFile } from './dashboard-file.js';
import { ActorStreams } from './actor-stream.js';
import { EventRing, EventStreams } from './event-stream.js';
import {
  allowedHosts,
  changeRefusal,
  cookieName,
  credentialOf,
  hostAllowed,
  isJsonBody,
  readRefusal,
  securityHeaders,
  tokenMatches,
} from './http-guard.js';
import { sendBody, sendJson } from './http-io.js';
import { loadPageAssets, type PageAssets } from './page-assets.js';
import { socketAnswer } from './question-desk.js';
import type { CommandHandlers } from '../../protocol/command-service.js';
import { RunHistory } from './run-history.js';
import { OpenQuestions } from './tree-view.js';
import { QueueDepthSamples } from './chart-data.js';
import { QueueWaits } from './queue-waits.js';
import { RunUsages } from './run-usage.js';
import { errorMessage } from '../../domain/error-message.js';

const NOT_LOGGED_IN = 'not logged in: open the URL that `raider hall dashboard` prints';

export const dashboardAdapter: HallAdapterFactory = (services) =>
  services.config.dashboard ? new DashboardAdapter(services, services.config.dashboard) : null;

/** The host part of the URL people open: a wildcard address is reached on loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

class DashboardAdapter implements HallAdapter {
  readonly name = 'dashboard';
  private readonly server: http.Server;
  private readonly token = randomBytes(32).toString('base64url');
  private readonly assets: PageAssets;
  private readonly deps: DashboardApiDeps;
  private hosts: ReadonlySet<string> = new Set();
  private cookie = '';
  private url: string | null = null;
  /** With `dashboard.questions: true`, the socket's `answer` goes to the dashboard's questions. */
  readonly commands?: Readonly<Partial<CommandHandlers>>;

  constructor(
    private readonly services: HallServices,
    private readonly config: DashboardConfig,
  ) {
    this.assets = loadPageAssets();
    const history = new RunHistory(services.paths, services.queries);
    // From the start: the ring holds the hall's first events too.
    const ring = new EventRing(services.bus);
    services.bus.subscribe({ filter: 'raider.spawned', receive: () => history.noteLiveMissions() });
    // What changes the past-run list: a run that starts (its events file appears) or ends (it becomes past,
    // and the kept events files are pruned).
    services.bus.subscribe({
      filter: 'raider.',
      receive: (event) => {
        if (event.type !== 'raider.spawned' && event.type !== 'raider.done') return;
        if (typeof event.id === 'string' && typeof event.time === 'number')
          history.noteTime(event.id, event.type === 'raider.done' ? 'done' : 'spawned', event.time);
        if (typeof event.id === 'string' && event.type === 'raider.done') history.noteWorktree(event.id, event);
        history.changed();
      },
    });
    // The pruned files go on the thread pool, after raider.done: a list made in between still names them.
    services.onEventsPruned(() => history.changed());
    const questions = config.questions ? services.questions : null;
    this.deps = {
      services,
      history,
      ring,
      streams: new EventStreams(services.bus, ring),
      actorStreams: new ActorStreams(services.actors),
      questions,
      openQuestions: new OpenQuestions(services.bus),
      charts: {
        samples: new QueueDepthSamples(services.paths.root, services.bus, services.queries, services.log),
        waits: new QueueWaits(services.paths.root, services.bus, services.log),
        usages: new RunUsages(),
        paths: services.paths,
      },
    };
    if (questions) this.commands = socketAnswer(questions);
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        services.log(`dashboard: ${req.method ?? ''} ${req.url ?? ''}: ${errorMessage(err)}`);
        if (!res.headersSent) sendJson(res, 500, { error: 'the dashboard failed on this request; the hall log says why' });
        else res.destroy();
      });
    });
    this.server.on('error', (err) => services.log(`dashboard listener: ${err.message}`));
  }

  status(): Record<string, unknown> {
    const { questions } = this.deps;
    return {
      dashboard: {
        url: this.url,
        read_only: this.config.read_only,
        streams: this.deps.streams.count,
        ...(questions ? { questions: questions.list().length } : {}),
      },
    };
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.config.port, this.config.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error(`the dashboard listens on ${String(address)}, not on a TCP port`);
    const { port } = address;
    const wildcard = this.config.host === '0.0.0.0' || this.config.host === '::';
    this.hosts = allowedHosts(port, [...this.config.hosts, ...(wildcard ? [] : [urlHost(this.config.host)])]);
    this.cookie = cookieName(port);
    this.url = `http://${urlHost(this.config.host)}:${port}/`;
    writeDashboardFile(this.services.paths.root, { url: this.url, token: this.token, pid: process.pid });
    // Every run: those an ACP client watches are asked here too, and the first answer wins.
    this.deps.questions?.openFace('dashboard', () => true);
  }

  async stop(): Promise<void> {
    this.deps.questions?.closeFace('dashboard');
    removeDashboardFile(this.services.paths.root, process.pid);
    this.deps.streams.closeAll();
    this.deps.actorStreams.closeAll();
    this.deps.ring.close();
    this.deps.openQuestions.close();
    this.deps.charts.samples.close();
    this.deps.charts.waits.close();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    securityHeaders(res, this.assets.scriptHashes);
    const url = new URL(req.url ?? '/', 'http://dashboard');
    const login = req.method === 'GET' && url.pathname === '/' && url.searchParams.has('token');
    const refused = this.refusal(req, url, login);
    if (refused !== null) {
      if (refused.status === 405) res.setHeader('Allow', 'GET, POST');
      sendJson(res, refused.status, { error: refused.error });
      return;
    }
    if (login) this.login(res, url.searchParams.get('token'));
    else if (req.method === 'GET' || req.method === 'HEAD') await this.read(req, res, url);
    else if (!(await serveApiChange(this.deps, req, res, url))) sendJson(res, 404, { error: `no such change: ${url.pathname}` });
  }

  /** The answer to a request the security rules refuse, or null when it may go on. */
  private refusal(req: IncomingMessage, url: URL, login: boolean): { status: number; error: string } | null {
    // DNS rebinding: a page under another name is same-origin to the browser and sends no fetch metadata.
    if (!hostAllowed(req, this.hosts))
      return { status: 421, error: 'unknown Host: open the dashboard as 127.0.0.1, localhost or a name in dashboard.hosts' };
    // The login itself checks the token it carries.
    if (login) return null;
    const credential = credentialOf(req, this.token, this.cookie);
    if (credential === null) return { status: 401, error: NOT_LOGGED_IN };
    if (req.method === 'GET' || req.method === 'HEAD') {
      const refusal = url.pathname.startsWith('/api/') ? readRefusal(req) : null;
      return refusal === null ? null : { status: 403, error: refusal };
    }
    if (req.method !== 'POST') return { status: 405, error: `${req.method ?? ''} is not served: reads are GET, changes POST` };
    if (this.config.read_only) return { status: 403, error: 'the dashboard is read-only (dashboard.read_only)' };
    const refusal = changeRefusal(req, credential);
    if (refusal !== null) return { status: 403, error: refusal };
    if (!isJsonBody(req)) return { status: 415, error: 'changes take a JSON body (Content-Type: application/json)' };
    return null;
  }

  /** Trades the token for a cookie and sends the browser to a URL without it. */
  private login(res: ServerResponse, given: string | null): void {
    if (!tokenMatches(given, this.token)) {
      sendJson(res, 401, { error: `wrong token: ${NOT_LOGGED_IN}` });
      return;
    }
    res.setHeader('Set-Cookie', `${this.cookie}=${this.token}; HttpOnly; SameSite=Strict; Path=/`);
    res.writeHead(303, { Location: '/' });
    res.end();
  }

  private async read(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const kept = this.assets.versioned.get(url.pathname);
    if (kept) {
      // Its route names its version: a browser may keep it (behind the same login: it is not public).
      res.setHeader('Cache-Control', 'private, max-age=31536000, immutable');
      sendBody(res, kept.type, kept.body);
      return;
    }
    const file = url.pathname === '/' ? this.assets.page(await firstData(this.deps)) : this.assets.files.get(url.pathname);
    if (file) sendBody(res, file.type, file.body);
    else if (!(await serveApiRead(this.deps, req, res, url))) sendJson(res, 404, { error: `not found: ${url.pathname}` });
  }
}
