/**
 * A hall with its dashboard for tests: a real `raider hall start` process
 * (or an in-process hall), its dashboard file read back, and a plain HTTP
 * client that sends exactly the headers a test gives (fetch adds its own).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { readDashboardFile } from '../../src/adapters/dashboard/dashboard-file.js';
import { dashboardAdapter } from '../../src/adapters/dashboard/dashboard-adapter.js';
import { eventually, spawnHallProcess, startTestHall, tempRoot, type Json, type TestHall } from '../support/test-hall.js';

export interface Board {
  url: string;
  token: string;
  port: number;
  /** `127.0.0.1:PORT`, the Host header a browser sends. */
  host: string;
}

export async function boardOf(root: string): Promise<Board> {
  const file = await eventually(() => {
    const read = readDashboardFile(root);
    if ('error' in read) throw new Error(read.error);
    return read;
  });
  const url = new URL(file.url);
  return { url: file.url, token: file.token, port: Number(url.port), host: url.host };
}

export async function startBoardProcess(
  config = 'dashboard: { listen: "127.0.0.1:0" }\n',
): Promise<{ root: string; board: Board; child: ChildProcess; stop(): Promise<void> }> {
  const root = tempRoot('dashboard-');
  fs.writeFileSync(path.join(root, '.raider-hall.yml'), config);
  const child = await spawnHallProcess(root);
  const board = await boardOf(root);
  return {
    root,
    board,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export async function startBoardHall(config = 'dashboard: { listen: "127.0.0.1:0" }\n'): Promise<{ hall: TestHall; board: Board }> {
  const hall = await startTestHall({ config, adapters: [dashboardAdapter] });
  return { hall, board: await boardOf(hall.root) };
}

/** Spawns `mission` on `name` and waits for its run's `raider.done`. */
export async function runToEnd(hall: TestHall, name: string, mission: string): Promise<Json> {
  const events = await hall.events('raider.done');
  try {
    const run = await hall.request({ cmd: 'spawn', name, mission });
    return await events.waitFor((e) => e.id === run.id);
  } finally {
    events.close();
  }
}

export interface HttpReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request with exactly these headers (Host included when given). */
export function httpRequest(
  board: Board,
  pathname: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: board.port,
        path: pathname,
        method: options.method ?? 'GET',
        headers: { Host: board.host, ...options.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export const bearer = (board: Board): Record<string, string> => ({ Authorization: `Bearer ${board.token}` });
export const cookie = (board: Board): Record<string, string> => ({ Cookie: `raider_hall_dashboard_${board.port}=${board.token}` });
export const json = { 'Content-Type': 'application/json' };

export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/** An open `/api/events` stream that keeps its messages and lets a test wait for one. */
export interface SseTap {
  messages: SseMessage[];
  waitFor(predicate: (m: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  /** Stops reading (the client's buffers fill, then the hall's). */
  pause(): void;
  close(): void;
}

export function openEventStream(board: Board, headers: Record<string, string> = {}, route = '/api/events'): Promise<SseTap> {
  return new Promise((resolve, reject) => {
    const messages: SseMessage[] = [];
    const waiters: Array<{ predicate: (m: SseMessage) => boolean; resolve: (m: SseMessage) => void }> = [];
    const req = http.get(
      { host: '127.0.0.1', port: board.port, path: route, headers: { Host: board.host, ...bearer(board), ...headers } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`event stream answered ${res.statusCode}`));
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const message: SseMessage = { data: '' };
            for (const line of block.split('\n')) {
              if (line.startsWith('id: ')) message.id = line.slice(4);
              else if (line.startsWith('event: ')) message.event = line.slice(7);
              else if (line.startsWith('data: ')) message.data = line.slice(6);
            }
            if (block.startsWith(':')) continue;
            messages.push(message);
            for (const w of [...waiters]) {
              if (!w.predicate(message)) continue;
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(message);
            }
          }
        });
        resolve({
          messages,
          waitFor(predicate, timeoutMs = 15_000) {
            const found = messages.find(predicate);
            if (found) return Promise.resolve(found);
            return new Promise((res2, rej) => {
              const timer = setTimeout(
                () => rej(new Error(`no such message; got ${messages.map((m) => m.data.slice(0, 60)).join(' | ')}`)),
                timeoutMs,
              );
              waiters.push({
                predicate,
                resolve: (m) => {
                  clearTimeout(timer);
                  res2(m);
                },
              });
            });
          },
          pause: () => res.pause(),
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
  });
}

/** A GET of the API with the bearer token: the reply's JSON with its HTTP status. */
export async function apiGet(board: Board, route: string): Promise<Json> {
  const reply = await httpRequest(board, route, { headers: bearer(board) });
  return { status: reply.status, ...(JSON.parse(reply.body) as Json) };
}

/** A POST of a JSON body to the API with the bearer token: the reply's JSON with its HTTP status. */
export async function apiPost(board: Board, route: string, body: unknown = {}): Promise<Json> {
  const reply = await httpRequest(board, route, { method: 'POST', headers: { ...bearer(board), ...json }, body: JSON.stringify(body) });
  return { status: reply.status, ...(JSON.parse(reply.body) as Json) };
}
