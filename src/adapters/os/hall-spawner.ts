/**
 * The hall starts its raiders itself, with glibc's posix_spawn through koffi
 * (libexec/spawn-process.cjs, the fork server's own way), called on a worker
 * thread of libuv's pool: posix_spawn does not copy the hall (the child
 * shares its memory until it execs), and the thread that waits for the exec
 * is not the event loop's, however long a busy machine makes it wait. Each raider's stderr is a spool file (stderr-spool.ts) that
 * the hall copies into the slot log with the run id in front, and that
 * survives a hall crash: no second process is needed to carry it
 * (docs/architecture.md, "Starting a raider"). Where posix_spawn cannot be
 * had, the hall falls back to its fork server (fork-server.ts): Node's own
 * spawn would fork the whole hall.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '../../domain/error-message.js';
import type { RaiderStarter, SpawnRequest, SpawnWatcher } from './fork-server.js';
import { killGroup } from './process-group.js';
import { RaiderStderr } from './stderr-spool.js';

interface StartedProcess {
  pid: number;
  stdin?: Duplex | null;
  onExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
}

interface StartRequest {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd: string;
  stdout: number;
  stderr: number;
  stdin?: 'socket';
}

/** libexec/spawn-process.cjs: its posix_spawn from a worker thread, or why it cannot be had here. */
interface SpawnProcessModule {
  loadPosixSpawn(): { startAsync?: PosixStart; why: string | null };
}

const SPAWN_PROCESS_SCRIPT = fileURLToPath(new URL('../../../libexec/spawn-process.cjs', import.meta.url));

type PosixStart = (request: StartRequest, done: (error: Error | null, started: StartedProcess | null) => void) => void;

/** posix_spawn, or why not: loaded once a process (it listens to SIGCHLD for every raider it started). */
let posixStart: PosixStart | string | undefined;

function loadPosixStart(): PosixStart | string {
  let loaded: SpawnProcessModule;
  try {
    loaded = createRequire(import.meta.url)(SPAWN_PROCESS_SCRIPT);
  } catch (err) {
    return errorMessage(err);
  }
  const posix = loaded.loadPosixSpawn();
  return posix.startAsync ?? posix.why ?? 'posix_spawn cannot be loaded';
}

/**
 * Starts under way on worker threads at once; the rest wait their turn, in
 * order. koffi keeps this many sets of call memory resident (256 KiB each):
 * a burst of 500 starts queued in koffi at once would take 128 MiB, and
 * koffi refuses calls past 256 queued.
 */
const MAX_STARTING = 4;

export class HallSpawner implements RaiderStarter {
  private closing = false;
  private starting = 0;
  private readonly waiting: Array<() => void> = [];

  private constructor(private readonly startProcess: PosixStart) {}

  /** The spawner, or why posix_spawn cannot be had here (the hall then uses its fork server). */
  static load(): HallSpawner | string {
    posixStart ??= loadPosixStart();
    return typeof posixStart === 'string' ? posixStart : new HallSpawner(posixStart);
  }

  start(): void {}

  spawn(request: SpawnRequest, watcher: SpawnWatcher): () => void {
    let listening = true;
    const stopListening = () => {
      listening = false;
    };
    if (this.closing) {
      watcher.failed('the hall is stopping');
      return stopListening;
    }
    const stderr = new RaiderStderr(request);
    let out: number | undefined;
    let err: number | undefined;
    const closeFiles = () => {
      if (out !== undefined) fs.closeSync(out);
      if (err !== undefined) fs.closeSync(err);
      out = err = undefined;
    };
    const started = (error: Error | null, child: StartedProcess | null) => {
      // The child has its own copies of both by now.
      closeFiles();
      this.starting--;
      this.waiting.shift()?.();
      if (child === null) {
        if (listening) watcher.failed(errorMessage(error ?? 'the raider could not be started'));
        return;
      }
      const pid = child.pid;
      // Its run was stopped while it started: it runs for nobody.
      if (!listening) killGroup(pid);
      stderr.follow();
      child.onExit((code, signal) => {
        // What the raider left behind in its group dies before its run counts as over.
        killGroup(pid);
        const report = () => {
          if (listening) watcher.exited(code, signal);
        };
        // On a later turn either way: the reply that the pid set going leaves first.
        stderr.finish(report);
      });
      if (listening) watcher.spawned(pid, child.stdin ?? undefined);
      else child.stdin?.destroy();
    };
    const go = () => {
      // Its run was stopped while it waited its turn.
      if (!listening) {
        this.waiting.shift()?.();
        return;
      }
      this.starting++;
      try {
        out = fs.openSync(request.stdoutPath, 'w');
        err = fs.openSync(stderr.path, 'a');
        this.startProcess(
          {
            command: request.command,
            args: request.args,
            env: request.env,
            cwd: request.cwd,
            stdout: out,
            stderr: err,
            ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
          },
          started,
        );
      } catch (e) {
        closeFiles();
        this.starting--;
        watcher.failed(errorMessage(e));
        this.waiting.shift()?.();
      }
    };
    if (this.starting < MAX_STARTING) go();
    else this.waiting.push(go);
    return stopListening;
  }

  /**
   * Starts nothing more. Nothing to wait for: a raider that still runs (a hall
   * stopped without its runs) keeps writing into its spool, which the next hall copies.
   */
  async close(): Promise<void> {
    this.closing = true;
  }
}

/** The hall's way of starting raiders: its own posix_spawn, else (or when asked) its fork server. */
export function hallRaiderStarter(
  env: Readonly<Record<string, string | undefined>>,
  log: (line: string) => void,
  forkServer: () => RaiderStarter,
): RaiderStarter {
  if (env.RAIDER_HALL_SPAWNER === 'fork-server') return forkServer();
  const spawner = HallSpawner.load();
  if (typeof spawner !== 'string') return spawner;
  log(`raiders are started through the fork server: ${spawner.split(os.EOL)[0]}`);
  return forkServer();
}
