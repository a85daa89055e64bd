/**
 * A Bot API server on loopback for the Telegram tests, reached through the
 * client's API root: getUpdates as a real long poll (held until an update
 * arrives or its timeout ends; an offset confirms and drops earlier
 * updates), sendMessage recorded with the message id it answered,
 * editMessageText and answerCallbackQuery recorded and answered `true`, unknown tokens answered 401, and failures
 * a test scripts per method (409, 429 with retry_after, 5xx, 400 ...).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// biome-ignore lint/suspicious/noExplicitAny: parsed Bot API bodies in tests are read by path without a schema; a wrong path fails the assertion
export type Json = Record<string, any>;

export interface FakeRequest {
  token: string;
  method: string;
  body: Json;
  /** Date.now() when it arrived. */
  at: number;
  /** The message id a successful sendMessage answered with. */
  messageId?: number;
}

export interface ScriptedAnswer {
  status: number;
  /** The JSON body; default is Telegram's error shape for the status. */
  body?: unknown;
  /** A non-JSON body instead (a proxy's HTML error page). */
  raw?: string;
}

interface Waiter {
  res: http.ServerResponse;
  timer: NodeJS.Timeout;
}

export class FakeBotApi {
  readonly requests: FakeRequest[] = [];
  private readonly pending = new Map<string, Json[]>();
  /** Every update ever pushed, per token. */
  private readonly delivered = new Map<string, Json[]>();
  private readonly nextId = new Map<string, number>();
  private readonly waiters = new Map<string, Waiter>();
  private readonly scripted = new Map<string, ScriptedAnswer[]>();
  private readonly listeners: Array<() => void> = [];
  private nextMessageId = 100;
  /** The most getUpdates of one token that were open at the same time. */
  maxConcurrentPolls = 0;
  private openPolls = new Map<string, number>();

  private constructor(
    private readonly server: http.Server,
    private readonly tokens: Set<string>,
  ) {}

  static async start(tokens: string[]): Promise<FakeBotApi> {
    let api!: FakeBotApi;
    const server = http.createServer((req, res) => api.serve(req, res));
    api = new FakeBotApi(server, new Set(tokens));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return api;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Queues an update for a bot (update_id assigned when not given) and answers a waiting long poll. */
  push(token: string, update: Json): Json {
    const id = update.update_id ?? this.nextId.get(token) ?? 1;
    this.nextId.set(token, Math.max(id + 1, this.nextId.get(token) ?? 1));
    const full = { ...update, update_id: id };
    const list = this.pending.get(token) ?? [];
    list.push(full);
    this.pending.set(token, list);
    this.delivered.set(token, [...(this.delivered.get(token) ?? []), full]);
    this.flush(token);
    return full;
  }

  /**
   * Acts as if no offset had ever confirmed anything: every update pushed is
   * pending again, as Telegram holds what a crashed client never confirmed.
   * Only the client's own offset keeps them from coming twice.
   */
  forgetConfirmations(token: string): void {
    this.pending.set(token, [...(this.delivered.get(token) ?? [])]);
  }

  /** The next calls of `method` get these answers, in order. */
  script(method: string, ...answers: ScriptedAnswer[]): void {
    this.scripted.set(method, [...(this.scripted.get(method) ?? []), ...answers]);
  }

  calls(method: string, token?: string): FakeRequest[] {
    return this.requests.filter((r) => r.method === method && (token === undefined || r.token === token));
  }

  sent(token?: string): Json[] {
    return this.calls('sendMessage', token).map((r) => r.body);
  }

  /** Resolves once a request satisfies `predicate` (also one already seen). */
  waitFor(predicate: (r: FakeRequest) => boolean, timeoutMs = 10_000): Promise<FakeRequest> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.requests.find(predicate);
        if (found) resolve(found);
        return found !== undefined;
      };
      if (check()) return;
      const timer = setTimeout(
        () => reject(new Error(`request not seen; got ${this.requests.map((r) => r.method).join(', ')}`)),
        timeoutMs,
      );
      const listener = () => {
        if (check()) {
          clearTimeout(timer);
          this.listeners.splice(this.listeners.indexOf(listener), 1);
        }
      };
      this.listeners.push(listener);
    });
  }

  async close(): Promise<void> {
    for (const [, waiter] of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.res.destroy();
    }
    this.waiters.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private tell(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (data += chunk));
    req.on('end', () => {
      const match = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? '');
      if (!match) return this.answer(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
      const [, token, method] = match as unknown as [string, string, string];
      let body: Json = {};
      try {
        body = data ? (JSON.parse(data) as Json) : {};
      } catch {
        body = {};
      }
      const request: FakeRequest = { token, method, body, at: Date.now() };
      this.requests.push(request);
      this.tell();
      if (!this.tokens.has(token)) return this.answer(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
      const scripted = this.scripted.get(method)?.shift();
      if (scripted) {
        if (scripted.raw !== undefined) {
          res.writeHead(scripted.status, { 'content-type': 'text/html' });
          return void res.end(scripted.raw);
        }
        const description = scripted.status === 409 ? 'Conflict: terminated by other getUpdates request' : `error ${scripted.status}`;
        return this.answer(res, scripted.status, scripted.body ?? { ok: false, error_code: scripted.status, description });
      }
      if (method === 'getUpdates') return this.getUpdates(token, body, res);
      if (method === 'sendMessage') {
        request.messageId = this.nextMessageId++;
        // A wait for a message Telegram took (one with its id) ends now, not at the next request.
        this.tell();
        return this.answer(res, 200, { ok: true, result: { message_id: request.messageId, chat: { id: body.chat_id }, text: body.text } });
      }
      return this.answer(res, 200, { ok: true, result: true });
    });
  }

  private getUpdates(token: string, body: Json, res: http.ServerResponse): void {
    const offset = typeof body.offset === 'number' ? body.offset : undefined;
    if (offset !== undefined) {
      // An offset confirms every update before it.
      this.pending.set(
        token,
        (this.pending.get(token) ?? []).filter((u) => u.update_id >= offset),
      );
    }
    const open = (this.openPolls.get(token) ?? 0) + 1;
    this.openPolls.set(token, open);
    this.maxConcurrentPolls = Math.max(this.maxConcurrentPolls, open);
    let closed = false;
    const done = () => {
      if (closed) return;
      closed = true;
      this.openPolls.set(token, (this.openPolls.get(token) ?? 1) - 1);
    };
    res.on('close', done);
    if ((this.pending.get(token) ?? []).length > 0) {
      this.answer(res, 200, { ok: true, result: this.pending.get(token) });
      return;
    }
    const previous = this.waiters.get(token);
    if (previous) {
      // Telegram ends the older long poll of a token when a newer one comes.
      clearTimeout(previous.timer);
      this.answer(previous.res, 409, { ok: false, error_code: 409, description: 'Conflict: terminated by other getUpdates request' });
    }
    const timeoutS = typeof body.timeout === 'number' ? body.timeout : 0;
    const timer = setTimeout(() => {
      this.waiters.delete(token);
      this.answer(res, 200, { ok: true, result: [] });
    }, timeoutS * 1000);
    this.waiters.set(token, { res, timer });
    // The client went away (the hall stopped and aborted its long poll).
    res.on('close', () => {
      if (this.waiters.get(token)?.res === res) {
        clearTimeout(timer);
        this.waiters.delete(token);
      }
    });
  }

  private flush(token: string): void {
    const waiter = this.waiters.get(token);
    if (!waiter) return;
    this.waiters.delete(token);
    clearTimeout(waiter.timer);
    this.answer(waiter.res, 200, { ok: true, result: this.pending.get(token) ?? [] });
  }

  private answer(res: http.ServerResponse, status: number, body: unknown): void {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}
