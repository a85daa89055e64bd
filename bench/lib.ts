/**
 * Shared pieces of the benchmarks: statistics, tables, temp hall roots,
 * minimal raider scripts, a hall started as its own process (the built CLI),
 * control-socket clients, and a clean-up that leaves no hall or raider behind
 * even when a benchmark fails.
 *
 * Benchmarks print; they never assert on time. Every figure is set against a
 * baseline measured in the same run, because these machines are noisy.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { onLines } from '../src/adapters/os/unix-socket.js';

export const REPO = fileURLToPath(new URL('..', import.meta.url));
export const RAIDER_BIN = path.join(REPO, 'bin', 'raider');

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON frames in benches are read by path without a schema
export type Json = Record<string, any>;

// ---------------------------------------------------------------- options

/** `--quick` or BENCH_QUICK=1: smaller counts, for a smoke run. */
export const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';

/** Epoch milliseconds with a fraction, comparable between processes of one machine (and with events' `time`). */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** A count: the default, or its quick size. */
export function count(full: number, quick: number): number {
  return QUICK ? quick : full;
}

// ---------------------------------------------------------------- statistics

export interface Stats {
  n: number;
  median: number;
  p90: number;
  mean: number;
  min: number;
  max: number;
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  // Linear interpolation between closest ranks.
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function stats(values: readonly number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    median: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    mean: sorted.length ? sum / sorted.length : NaN,
    min: sorted[0] ?? NaN,
    max: sorted[sorted.length - 1] ?? NaN,
  };
}

export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (10 ms ticks). */
export function processCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat (utime, stime) are 12 and 13 after the command name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

const CLOCK_TICKS = 100;

/**
 * Waits until process `pid` has used no more than one clock tick of CPU over
 * `quietMs` (it is idle), at most `maxMs`. Resolves with how long it stayed
 * busy, and whether it went idle at all.
 */
export async function waitIdle(pid: number, quietMs = 500, maxMs = 60_000): Promise<{ busyMs: number; idle: boolean }> {
  const t0 = nowMs();
  const step = 100;
  const window: number[] = [processCpuMs(pid)];
  for (;;) {
    await sleep(step);
    window.push(processCpuMs(pid));
    if (window.length > quietMs / step + 1) window.shift();
    const elapsed = nowMs() - t0;
    if (window.length > quietMs / step && window[window.length - 1]! - window[0]! <= 1000 / CLOCK_TICKS) {
      return { busyMs: Math.max(0, elapsed - quietMs), idle: true };
    }
    if (elapsed > maxMs) return { busyMs: elapsed, idle: false };
  }
}

/** CPU time (user + system) this process has used so far, in ms. */
export function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return String(value);
  return value.toFixed(digits);
}

// ---------------------------------------------------------------- output

/** A plain-text table; the first `leftColumns` columns are aligned left, the rest (figures) right. */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>, leftColumns = 1): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function statsRow(label: string, s: Stats, digits = 2): string[] {
  return [label, String(s.n), fmt(s.median, digits), fmt(s.p90, digits), fmt(s.mean, digits), fmt(s.min, digits), fmt(s.max, digits)];
}

export const STATS_HEADERS = ['', 'n', 'median', 'p90', 'mean', 'min', 'max'] as const;

/** One line of the summary that bench/run-all.ts collects. */
export interface SummaryRow {
  bench: string;
  metric: string;
  value: string;
  target?: string;
  /** true met, false missed, undefined: no target. */
  met?: boolean;
}

export const SUMMARY_PREFIX = 'BENCH-SUMMARY ';

export function summary(rows: SummaryRow[]): void {
  process.stdout.write(`${SUMMARY_PREFIX}${JSON.stringify(rows)}\n`);
}

export function machine(): string {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  return `${os.cpus().length} CPUs (nproc ${os.availableParallelism()}), ${os.cpus()[0]?.model ?? '?'}, node ${process.version}, ${os.platform()} ${os.release()}, load average ${load}`;
}

// ---------------------------------------------------------------- clean-up

/**
 * Every temp root of this process lives under one directory, so a sweep can
 * find exactly the processes we started: halls name it in their argv, raiders
 * carry RAIDER_HALL_ROOT=... in their environment.
 */
const PARENT = process.env.BENCH_TMP ?? os.tmpdir();
const OWN_DIR = fs.mkdtempSync(path.join(PARENT, `raider-bench-${process.pid}-`));
const children = new Set<ChildProcess>();
let cleaned = false;

export function tempRoot(label: string): string {
  return fs.mkdtempSync(path.join(OWN_DIR, `${label}-`));
}

/** Pids of live processes whose argv or environment names `dir` (ours only: others' /proc entries are unreadable). */
export function processesUnder(dir: string): number[] {
  const found: number[] = [];
  const needleArg = Buffer.from(dir);
  const needleEnv = Buffer.from(`RAIDER_HALL_ROOT=${dir}`);
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`);
      if (cmdline.includes(needleArg)) {
        found.push(pid);
        continue;
      }
      const environ = fs.readFileSync(`/proc/${name}/environ`);
      if (environ.includes(needleEnv)) found.push(pid);
    } catch {
      // Gone, or not ours.
    }
  }
  return found;
}

/** SIGKILLs every process that belongs to a root under `dir`; returns how many there were. */
export function killUnder(dir: string): number {
  const pids = processesUnder(dir);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  return pids.length;
}

export function cleanup(): void {
  if (cleaned) return;
  cleaned = true;
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  const strays = killUnder(OWN_DIR);
  if (strays > 0) process.stderr.write(`bench clean-up: killed ${strays} leftover process(es)\n`);
  if (process.env.BENCH_KEEP !== '1') fs.rmSync(OWN_DIR, { recursive: true, force: true });
}

process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    cleanup();
    process.exit(128 + (os.constants.signals[sig] ?? 0));
  });
}

/** Runs a benchmark's main, cleans up, and exits 1 on failure (the figures printed so far stay). */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => {
      cleanup();
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`benchmark failed: ${(err as Error)?.stack ?? String(err)}\n`);
      cleanup();
      process.exit(1);
    },
  );
}

// ---------------------------------------------------------------- raiders

/** The run.finished line of a completed run, in stream-json v1 with sorted keys. */
export const FINISHED_LINE = '{"elapsed":0,"response":"ok","seq":1,"status":"completed","time":0,"type":"run.finished","version":1}';

/**
 * The minimal raider: one /bin/sh script that prints a `run.finished` line
 * and exits. It is the physical floor the hall is measured against.
 */
export function writeMinimalRaider(dir: string): string {
  const file = path.join(dir, 'min-raider.sh');
  fs.writeFileSync(file, `#!/bin/sh\nprintf '%s\\n' '${FINISHED_LINE}'\n`, { mode: 0o755 });
  return file;
}

/**
 * A minimal raider that can also hold its slot: a mission `wait N` sleeps N
 * seconds (SIGTERM or SIGINT end it as interrupted); anything else finishes at once.
 */
export function writeWaitingRaider(dir: string): string {
  const file = path.join(dir, 'wait-raider.sh');
  const interrupted = '{"elapsed":0,"error":"interrupted","seq":1,"status":"interrupted","time":0,"type":"run.finished","version":1}';
  fs.writeFileSync(
    file,
    [
      '#!/bin/sh',
      'for a; do m=$a; done',
      'case $m in',
      "  'wait '*)",
      `    trap 'kill $s 2>/dev/null; printf "%s\\n" '"'"'${interrupted}'"'"'; exit 143' TERM INT`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion for the fake raider script, not a JS template
      '    sleep "${m#wait }" & s=$!',
      '    wait $s',
      '    ;;',
      'esac',
      `printf '%s\\n' '${FINISHED_LINE}'`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return file;
}

/** The argv the hall gives a raider of `root` for `mission` (no config entry): see src/domain/raider-argv.ts. */
export function hallLikeArgs(root: string, mission: string): string[] {
  return ['--stream-json', '-o', `preferred_lib_target=${root}/.raider/lib`, '--root', root, '--', mission];
}

/** How long each bare spawn() call itself took (it returns once the child has exec'd), in ms. */
export const bareSpawnCalls: number[] = [];

/** A process's memory in MiB, from /proc/PID/smaps_rollup. */
export interface Memory {
  rss: number;
  pss: number;
  /** Private_Clean + Private_Dirty: pages nobody else maps. */
  uss: number;
}

/** MiB of one `Key:   N kB` line of a smaps text. */
export function kib(text: string, key: string): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

export function memoryOf(pid: number): Memory {
  const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return { rss: kib(text, 'Rss'), pss: kib(text, 'Pss'), uss: kib(text, 'Private_Clean') + kib(text, 'Private_Dirty') };
}

/** Resident memory of a process in MB, from /proc. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The most resident memory a process has had so far in MB (VmHWM), from /proc. */
export function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** How many file descriptors a process has open, from /proc. */
export function fdCount(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

/** The number after `name` on the command line (`--missions 100`), if any. */
export function argNumber(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : undefined;
}

/**
 * One bare spawn with the hall's stdio set-up: stdin /dev/null, stdout to a
 * fresh file, stderr appended to a file, its own process group. Resolves with
 * the wall time from opening the files to the exit, in ms.
 */
export function bareSpawn(
  command: string,
  args: string[],
  outFile: string,
  errFile: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    let out: number | undefined;
    let err: number | undefined;
    let child: ChildProcess;
    try {
      out = fs.openSync(outFile, 'w');
      err = fs.openSync(errFile, 'a');
      const s0 = nowMs();
      child = spawn(command, args, { cwd, env, stdio: ['ignore', out, err], detached: true });
      bareSpawnCalls.push(nowMs() - s0);
    } catch (e) {
      reject(e as Error);
      return;
    } finally {
      if (out !== undefined) fs.closeSync(out);
      if (err !== undefined) fs.closeSync(err);
    }
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`bare raider exited ${code}`));
      else resolve(nowMs() - t0);
    });
  });
}

// ---------------------------------------------------------------- the hall

export interface HallProcess {
  root: string;
  socket: string;
  child: ChildProcess;
  stderr(): string;
  /** SIGTERM, then wait for the exit; resolves with the ms it took. */
  stop(timeoutMs?: number): Promise<number>;
}

export function socketPath(root: string): string {
  return path.join(root, '.raider-hall.socket');
}

export function hallEnv(raiderBin: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, RAIDER_HALL_RAIDER_BIN: raiderBin };
  // The benches want a plain hall: no ACP listener, no Telegram poller from the caller's environment.
  for (const key of Object.keys(env)) if (key.startsWith('RAIDER_HALL_TELEGRAM') || key.startsWith('RAIDER_HALL_ACP')) delete env[key];
  return env;
}

/**
 * Starts `node bin/raider hall start ROOT --quiet` (the built CLI) and waits
 * until `status` (or `probe`, another command) answers. Resolves with the hall
 * and the ms until it answered.
 */
export async function startHall(
  root: string,
  raiderBin: string,
  /** `bin`: another build's `bin/raider` (an A/B of two builds in one run); this repository's by default. */
  options: { timeoutMs?: number; nodeArgs?: string[]; env?: NodeJS.ProcessEnv; probe?: Json; bin?: string } = {},
): Promise<{ hall: HallProcess; readyMs: number }> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const t0 = nowMs();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.bin ?? RAIDER_BIN, 'hall', 'start', root, '--quiet'], {
    env: { ...hallEnv(raiderBin), ...options.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const socket = socketPath(root);
  const deadline = t0 + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`hall exited (${child.exitCode ?? child.signalCode}): ${stderr}`);
    try {
      // A hall with a long queue may take seconds to answer its first status: wait for that answer rather than ask again.
      const reply = await request(socket, options.probe ?? { cmd: 'status' }, Math.max(5_000, deadline - nowMs()));
      if (reply.error === undefined) break;
    } catch {
      /* not yet */
    }
    if (nowMs() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`hall did not answer within ${timeoutMs} ms: ${stderr}`);
    }
    await sleep(5);
  }
  const readyMs = nowMs() - t0;
  const hall: HallProcess = {
    root,
    socket,
    child,
    stderr: () => stderr,
    stop: (stopTimeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const s0 = nowMs();
        if (child.exitCode !== null || child.signalCode !== null) return resolve(0);
        const timer = setTimeout(() => {
          const ps = processesUnder(root).length;
          child.kill('SIGKILL');
          reject(
            new Error(
              `hall did not stop within ${stopTimeoutMs} ms of SIGTERM (${ps} process(es) of its root still there); its stderr: ${stderr.slice(-2000)}`,
            ),
          );
        }, stopTimeoutMs);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve(nowMs() - s0);
        });
        child.kill('SIGTERM');
      }),
  };
  return { hall, readyMs };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** One command on a connection of its own. */
export function request(socket: string, payload: Json, timeoutMs = 30_000): Promise<Json> {
  return new Promise((resolve, reject) => {
    const conn = net.connect(socket);
    let buffer = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`no reply to ${JSON.stringify(payload)} within ${timeoutMs} ms`));
    }, timeoutMs);
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      conn.destroy();
      try {
        resolve(JSON.parse(buffer.slice(0, nl)) as Json);
      } catch (err) {
        reject(err as Error);
      }
    });
    conn.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    conn.write(`${JSON.stringify({ type: 'command', payload })}\n`);
  });
}

/** A connection that keeps going: replies come back in the order the commands went. */
export class Client {
  private readonly conn: net.Socket;
  private readonly waiting: Array<{ resolve: (reply: Json) => void; reject: (err: Error) => void }> = [];
  private failure: Error | null = null;

  private constructor(conn: net.Socket) {
    this.conn = conn;
    onLines(conn, (line) => {
      const w = this.waiting.shift();
      if (!w) return;
      try {
        w.resolve(JSON.parse(line) as Json);
      } catch (err) {
        w.reject(err as Error);
      }
    });
    const fail = (err: Error) => {
      this.failure = err;
      for (const w of this.waiting.splice(0)) w.reject(err);
    };
    conn.on('error', fail);
    conn.on('close', () => fail(new Error('connection closed')));
  }

  static connect(socket: string): Promise<Client> {
    return new Promise((resolve, reject) => {
      const conn = net.connect(socket);
      conn.once('connect', () => {
        conn.off('error', reject);
        resolve(new Client(conn));
      });
      conn.once('error', reject);
    });
  }

  /** Sends one command; `onSent` gets the time the frame was handed to the socket. */
  command(payload: Json): Promise<Json> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.conn.write(`${JSON.stringify({ type: 'command', payload })}\n`);
    });
  }

  /** Sends many commands in one write (pipelined); resolves with every reply. */
  pipeline(payloads: readonly Json[]): Promise<Json[]> {
    if (this.failure) return Promise.reject(this.failure);
    const replies = payloads.map(
      () =>
        new Promise<Json>((resolve, reject) => {
          this.waiting.push({ resolve, reject });
        }),
    );
    this.conn.write(payloads.map((p) => `${JSON.stringify({ type: 'command', payload: p })}\n`).join(''));
    return Promise.all(replies);
  }

  close(): void {
    this.conn.removeAllListeners('close');
    this.conn.destroy();
  }
}

/**
 * An event-bus subscription. Resolves once the hall has it (the reply to a
 * `status` sent after the subscribe frame has come back). `onEvent` sees each
 * event with the time it was read.
 */
export class Subscription {
  private readonly waiters = new Map<string, (event: Json, at: number) => void>();
  /** raider.done and raider.spawned events that came before anybody waited for them: `TYPE ID` → [event, at]. */
  private readonly seen = new Map<string, [Json, number]>();
  readonly counts = new Map<string, number>();

  private constructor(private readonly conn: net.Socket) {}

  static open(socket: string, filter = 'raider.'): Promise<Subscription> {
    return new Promise((resolve, reject) => {
      const conn = net.connect(socket);
      const sub = new Subscription(conn);
      let ready = false;
      onLines(conn, (line) => {
        const at = nowMs();
        const event = JSON.parse(line) as Json;
        if (!ready) {
          ready = true;
          resolve(sub);
          return;
        }
        sub.take(event, at);
      });
      conn.on('error', reject);
      conn.on('connect', () => {
        conn.write(`${JSON.stringify({ type: 'subscribe', payload: { filter } })}\n`);
        conn.write(`${JSON.stringify({ type: 'command', payload: { cmd: 'status' } })}\n`);
      });
    });
  }

  /** Hears every event, with the time it was read (a bench that needs more than raider.done). */
  onEvent: ((event: Json, at: number) => void) | null = null;

  private take(event: Json, at: number): void {
    this.onEvent?.(event, at);
    const type = String(event.type);
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
    if (type !== 'raider.done' && type !== 'raider.spawned') return;
    const key = `${type} ${String(event.id)}`;
    const waiter = this.waiters.get(key);
    if (waiter) {
      this.waiters.delete(key);
      waiter(event, at);
    } else this.seen.set(key, [event, at]);
  }

  /** Resolves with the raider.done of run `id` and the time it was read. */
  done(id: string, timeoutMs = 60_000): Promise<{ event: Json; at: number }> {
    return this.event('raider.done', id, timeoutMs);
  }

  /** Resolves with the raider.spawned of run `id` (with a `raider.` filter) and the time it was read. */
  spawned(id: string, timeoutMs = 60_000): Promise<{ event: Json; at: number }> {
    return this.event('raider.spawned', id, timeoutMs);
  }

  private event(type: string, id: string, timeoutMs: number): Promise<{ event: Json; at: number }> {
    const key = `${type} ${id}`;
    const seen = this.seen.get(key);
    if (seen) {
      this.seen.delete(key);
      return Promise.resolve({ event: seen[0], at: seen[1] });
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(key);
        reject(new Error(`no ${type} for ${id} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(key, (event, at) => {
        clearTimeout(timer);
        resolve({ event, at });
      });
    });
  }

  close(): void {
    this.conn.destroy();
  }
}
