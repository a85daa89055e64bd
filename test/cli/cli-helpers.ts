/**
 * Helpers for the CLI tests: every command runs as the real `bin/raider`
 * (built into dist/), against a hall that is a real process on a temp root.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { eventually, hallEnv, RAIDER_BIN, request, runCli, tapEvents, tempRoot, type EventTap, type Json } from '../support/hall-client.js';
import { processAlive } from '../../src/adapters/os/process-alive.js';

export type CliResult = Awaited<ReturnType<typeof runCli>>;

/** A fresh temp root (real path, as `process.cwd()` of a child reports it), optionally with a config. */
const roots: string[] = [];

export function hallRoot(config?: string, prefix = 'hall-cli-'): string {
  const root = fs.realpathSync(tempRoot(prefix));
  roots.push(root);
  if (config !== undefined) fs.writeFileSync(path.join(root, '.raider-hall.yml'), config);
  return root;
}

/** Removes the temp roots of this test file (call in afterAll, once its halls are stopped). */
export function removeRoots(): void {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
}

export function socketOf(root: string): string {
  return path.join(root, '.raider-hall.socket');
}

export function pidFileOf(root: string): string {
  return path.join(root, '.raider-hall.pid');
}

/** `raider hall ARGS` with the hall's root as the working directory unless told otherwise. */
export function hall(
  args: string[],
  cwd: string,
  options: { env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return runCli(['hall', ...args], { cwd, timeoutMs: 90_000, ...options });
}

/**
 * `raider hall ARGS` with a terminal as its stdin, as a person at a shell
 * runs it: through util-linux `script`, which gives it a pseudo-terminal.
 * Its stdout and stderr come back together in `stdout`, with CRLF line ends.
 */
export function hallOnTerminal(args: string[], cwd: string): Promise<CliResult> {
  const quoted = [process.execPath, RAIDER_BIN, 'hall', ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', quoted, '/dev/null'], { cwd, env: hallEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A `raider hall ARGS` that is still going: the test can watch its output as it comes. */
export interface LiveCli {
  stdout(): string;
  stderr(): string;
  /** Sends the command a signal (Ctrl-C is SIGINT). */
  signal(signal: NodeJS.Signals): void;
  /** Resolves once stdout contains `text`. */
  printed(text: string, timeoutMs?: number): Promise<void>;
  done: Promise<CliResult>;
}

export function hallLive(args: string[], cwd: string, timeoutMs = 60_000): LiveCli {
  const child = spawn(process.execPath, [RAIDER_BIN, 'hall', ...args], { cwd, env: hallEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    signal: (signal) => child.kill(signal),
    printed: (text, ms = 30_000) => eventually(() => expect(stdout).toContain(text), ms, 20),
    done,
  };
}

/** A zombie (exited, not yet reaped by its new parent) is not alive. */
export function alive(pid: number): boolean {
  return processAlive(pid);
}

/** A foreground hall (`raider hall start ROOT --quiet`), a child of the test process. */
export interface HallProcess {
  root: string;
  child: ChildProcess;
  /** Resolves with the exit code and signal once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** SIGTERM (unless already gone) and wait for the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Like spawnHallProcess of test/support, with room for a slow machine, and
 * ready only once the hall has printed its banner: the socket answers before
 * the pid file is written and before SIGTERM is handled (see lifecycle.test.ts).
 */
async function spawnHall(root: string, env: Record<string, string | undefined>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [RAIDER_BIN, 'hall', 'start', root], { env: hallEnv(env), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`hall exited ${child.exitCode}: ${stderr}`);
    if (stderr.includes(`Hall running in ${root} (PID ${child.pid})`)) {
      await request(socketOf(root), { cmd: 'status' });
      return child;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill('SIGKILL');
  throw new Error(`hall did not come up: ${stderr}`);
}

/** `env` is added to the hall's environment (RAIDER_HALL_RAIDER_BIN: undefined runs the real raider). */
export async function startHallProcess(root: string, env: Record<string, string | undefined> = {}): Promise<HallProcess> {
  const child = await spawnHall(root, env);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode, at: Date.now() });
    else child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() }));
  });
  return {
    root,
    child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const { code, signal } = await exited;
      clearTimeout(timer);
      return { code, signal };
    },
  };
}

const SPAWNED = /^Spawned raider (\S+) \(PID (\d+)\) in slot (\S+)\.\n$/;

/** The run id, pid and slot of a `Spawned raider ...` line (the whole output). */
export function spawned(text: string): { id: string; pid: number; slot: string } {
  const m = SPAWNED.exec(text);
  if (!m) throw new Error(`not a Spawned line: ${JSON.stringify(text)}`);
  return { id: m[1]!, pid: Number(m[2]), slot: m[3]! };
}

export function eventsFile(root: string, id: string): string {
  return path.join(root, '.raider-hall', 'logs', `${id}.events.jsonl`);
}

/** Waits until the fake raider has written run.started: its signal handlers are in place. */
export async function raiderStarted(root: string, id: string): Promise<void> {
  await eventually(() => expect(fs.readFileSync(eventsFile(root, id), 'utf8')).toContain('"run.started"'), 60_000, 10);
}

/** Spawns `mission` to `name` on the hall of `root` and waits until its fake raider has started; its run id. */
export async function startedRun(root: string, name: string, mission = 'wait 600'): Promise<string> {
  const spawned = await request(socketOf(root), { cmd: 'spawn', name, mission });
  const id = String(spawned.id);
  await raiderStarted(root, id);
  return id;
}

/** Subscribes to raider.done before something is spawned. */
export function doneTap(root: string): Promise<EventTap> {
  return tapEvents(socketOf(root), 'raider.done');
}

export async function doneOf(tap: EventTap, id: string): Promise<Json> {
  return tap.waitFor((e) => e.type === 'raider.done' && e.id === id, 60_000);
}

/** Waits until the hall has no running raider (so the next test starts clean). */
export async function idle(root: string): Promise<void> {
  await eventually(async () => expect((await request(socketOf(root), { cmd: 'status' })).running).toBe(0), 60_000, 50);
}

export { eventually, request, runCli, tempRoot };

/** The hall of a test file: its root and a tap of its `raider.done` events, there once `beforeAll` has run. */
export interface FileHall {
  readonly root: string;
  readonly tap: EventTap;
}

/**
 * Starts one hall process with `config` for the whole test file (in
 * `beforeAll`), and stops it after the file, checking that it exits 0.
 */
export function hallForFile(config: string): FileHall {
  let root = '';
  let h: HallProcess | undefined;
  let tap: EventTap | undefined;
  beforeAll(async () => {
    root = hallRoot(config);
    h = await startHallProcess(root);
    tap = await doneTap(root);
  });
  afterAll(async () => {
    tap?.close();
    expect((await h?.stop())?.code).toBe(0);
  });
  return {
    get root() {
      return root;
    },
    get tap() {
      if (!tap) throw new Error('the file hall is not started yet: use it inside a test');
      return tap;
    },
  };
}

/** A `raider demo` in the foreground, its output gathered as it comes. */
export interface DemoRun {
  child: ChildProcess;
  out: string;
  err: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `raider ARGS` with the demo's own raider (the built-in one, scripted), not the tests' fake. */
export function startDemo(args: string[]): DemoRun {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'RAIDER_HALL_RAIDER_BIN') env[k] = v;
  const child = spawn(process.execPath, [RAIDER_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const run: DemoRun = {
    child,
    out: '',
    err: '',
    exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))),
  };
  child.stdout.on('data', (d: Buffer) => (run.out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (run.err += d.toString()));
  return run;
}

/** How the demo ended; SIGKILLed if it has not ended `ms` after the call. */
export async function demoEnded(run: DemoRun, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const timer = setTimeout(() => run.child.kill('SIGKILL'), ms);
  try {
    return await run.exited;
  } finally {
    clearTimeout(timer);
  }
}
