/**
 * Talking to a hall from a test without loading one: its control socket
 * (request, raw exchange, event tap), the built CLI, a hall as its own
 * process, and waiting on conditions. A file that starts no in-process hall
 * imports this, not test-hall.ts, so its worker does not load the whole hall.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { onLines } from '../../src/adapters/os/unix-socket.js';
import { tempRoot } from './temp-roots.js';

export { tempRoot };

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const RAIDER_BIN = path.join(REPO, 'bin', 'raider');
/** The scripted ACP agent (test/fixtures/scripted-acp-agent.mjs: the prompt says what it does). */
export const SCRIPTED_ACP_AGENT = path.join(REPO, 'test', 'fixtures', 'scripted-acp-agent.mjs');
/** fake-raider.mjs behind a sh front that answers plain `answer TEXT` missions without a Node start-up. */
export const FAKE_RAIDER = path.join(REPO, 'test', 'fixtures', 'fake-raider.sh');

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON frames in tests are read by path without a schema; a wrong path fails the assertion
export type Json = Record<string, any>;

export function hallEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { ...process.env, RAIDER_HALL_RAIDER_BIN: FAKE_RAIDER, ...extra };
}

export function request(socket: string, payload: Json): Promise<Json> {
  return rawExchange(socket, `${JSON.stringify({ type: 'command', payload })}\n`, 1).then((r) => r[0]!);
}

export function rawExchange(socketPath: string, data: string | Buffer, count: number, timeoutMs = 15_000): Promise<Json[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    const replies: Json[] = [];
    let buffer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`timed out with ${replies.length}/${count} replies: ${buffer.slice(0, 200)}`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        replies.push(JSON.parse(buffer.slice(0, nl)) as Json);
        buffer = buffer.slice(nl + 1);
        if (replies.length === count) {
          clearTimeout(timer);
          socket.destroy();
          resolve(replies);
          return;
        }
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    if (count === 0) {
      socket.end(data, () => {
        clearTimeout(timer);
        resolve([]);
      });
    } else socket.write(data);
  });
}

/** A subscription that keeps every event and lets a test wait for one. */
export interface EventTap {
  all: Json[];
  /** The raw lines as they came, to check the encoding. */
  lines: string[];
  waitFor(predicate: (e: Json) => boolean, timeoutMs?: number): Promise<Json>;
  close(): void;
}

interface EventWaiter {
  predicate: (e: Json) => boolean;
  resolve: (e: Json) => void;
}

/** The first event seen so far that matches, or else the next one to come before the timeout. */
function waitForEvent(all: Json[], waiters: EventWaiter[], predicate: (e: Json) => boolean, timeoutMs: number): Promise<Json> {
  const found = all.find(predicate);
  if (found) return Promise.resolve(found);
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`event not seen; got: ${all.map((e) => e.type).join(', ')}`)), timeoutMs);
    waiters.push({
      predicate,
      resolve: (e) => {
        clearTimeout(timer);
        res(e);
      },
    });
  });
}

export function tapEvents(socketPath: string, filter: string): Promise<EventTap> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    const all: Json[] = [];
    const lines: string[] = [];
    const waiters: EventWaiter[] = [];
    let ready = false;
    const tap: EventTap = {
      all,
      lines,
      waitFor: (predicate, timeoutMs = 15_000) => waitForEvent(all, waiters, predicate, timeoutMs),
      close: () => socket.destroy(),
    };
    onLines(socket, (line) => {
      const event = JSON.parse(line) as Json;
      if (!ready && event.type === undefined && 'running' in event) {
        // The reply to the status command sent after the subscribe frame: subscribed.
        ready = true;
        resolve(tap);
        return;
      }
      lines.push(line);
      all.push(event);
      for (const w of [...waiters]) {
        if (w.predicate(event)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(event);
        }
      }
    });
    socket.on('error', reject);
    socket.on('connect', () => {
      socket.write(`${JSON.stringify({ type: 'subscribe', payload: { filter } })}\n`);
      socket.write(`${JSON.stringify({ type: 'command', payload: { cmd: 'status' } })}\n`);
    });
  });
}

/** Runs `raider ARGS` (the built CLI) and collects its output. */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RAIDER_BIN, ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: hallEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Starts `raider hall start ROOT --quiet` as its own process and waits until it answers. */
export async function spawnHallProcess(
  root: string,
  env: Record<string, string | undefined> = {},
  timeoutMs = 15_000,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [RAIDER_BIN, 'hall', 'start', root, '--quiet'], {
    env: hallEnv(env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const socketPath = path.join(root, '.raider-hall.socket');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`hall exited ${child.exitCode}: ${stderr}`);
    try {
      await request(socketPath, { cmd: 'status' });
      return child;
    } catch {
      await new Promise((r) => setTimeout(r, 30));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`hall did not come up: ${stderr}`);
}

export function readJsonLines(file: string): Json[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Json);
}

/** The real setTimeout, taken before any test fakes it: `eventually` waits on real time (a test may fake the timers of the code it drives). */
const realSetTimeout = globalThis.setTimeout;

export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 10_000, stepMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw last;
    await new Promise((r) => realSetTimeout(r, stepMs));
  }
}

/** Resolves once a raider has written run.started to its events file: its signal handlers are in place. */
export async function runStarted(eventsPath: unknown): Promise<void> {
  await eventually(() => expect(fs.readFileSync(eventsPath as string, 'utf8')).toContain('run.started'), 10_000, 10);
}
