/**
 * The hall's side of its fork server (`libexec/raider-spawner.cjs`): a small
 * child process that starts the raiders and reports their exits, so that a
 * start never holds up the hall's event loop (docs/architecture.md,
 * "Starting a raider": posix_spawn where it can, else Node's spawn, which
 * then forks the small fork server, not the hall).
 *
 * If the fork server dies, its raiders live on in their own process groups:
 * each watcher is told it lost its process (and watches the pid instead), and
 * the next spawn starts a new fork server.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Duplex, Readable, Writable } from 'node:stream';
import fs from 'node:fs';
import os from 'node:os';
import { describeLineFault, MAX_LINE_BYTES } from '../../protocol/line-reader.js';
import { onLines } from './unix-socket.js';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { definedFields } from '../../domain/defined-fields.js';

/** Where the fork server's script is: `libexec/` at the package root, seen from `src/` and `dist/` alike. */
export const FORK_SERVER_SCRIPT = fileURLToPath(new URL('../../../libexec/raider-spawner.cjs', import.meta.url));

export interface SpawnRequest {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd: string;
  /** The raider's stdout, opened for writing (it exists already). */
  stdoutPath: string;
  /** Where its stderr is appended. */
  stderrPath: string;
  /**
   * When set, the fork server reads the raider's stderr through a pipe and
   * appends it to `stderrPath` line by line, each line starting with this
   * (the run id: parallel runs share one slot log); else the file is its stderr.
   */
  stderrPrefix?: string;
  /**
   * 'socket': its stdin is one end of a socket pair, the other the hall's
   * (`spawned` gets it): a warm ACP bridge's (docs/agents.md, "Warm
   * bridges"). Only the hall's own spawner (hall-spawner.ts) has it; else stdin is /dev/null.
   */
  stdin?: 'socket';
}

export interface SpawnWatcher {
  /** `stdin`: the hall's end of the process's stdin, when the request asked for a socket. */
  spawned(pid: number, stdin?: Duplex): void;
  /** The process could not be started. */
  failed(error: string): void;
  exited(code: number | null, signal: NodeJS.Signals | null): void;
  /** The fork server died: the process (if `pid` is known) may still run, but its exit will not be reported. */
  lost(pid: number | undefined): void;
}

interface Watch {
  watcher: SpawnWatcher;
  pid?: number;
  /** Its exit was reported and is told on the next turn (see receive). */
  exit?: { code: number | null; signal: NodeJS.Signals | null };
}

const signalName = z.custom<NodeJS.Signals>((v) => typeof v === 'string' && v in os.constants.signals, 'a signal name');

/** What the fork server reports, a line each: a raider's pid, why it could not start one, or how one ended. */
const ServerMessage = z.union([
  z.object({ id: z.number(), pid: z.number().int() }),
  z.object({ id: z.number(), error: z.string() }),
  z.object({ id: z.number(), code: z.number().int().nullable(), signal: signalName.nullable() }),
]);

/** What starts raiders for the hall: its own posix_spawn (hall-spawner.ts) or this fork server. */
export interface RaiderStarter {
  /** Gets ready now, so that the first run does not wait. */
  start(): void;
  /** Starts a process; the watcher hears of it. Returns a function that stops listening. */
  spawn(request: SpawnRequest, watcher: SpawnWatcher): () => void;
  /** Starts nothing more, once the hall's last run is over. */
  close(): Promise<void>;
}

export class ForkServer implements RaiderStarter {
  /** Its stdin takes requests, its stdout gives reports; its stderr is the hall's. */
  private child: ChildProcessByStdio<Writable, Readable, null> | null = null;
  private nextId = 1;
  private readonly watches = new Map<number, Watch>();
  private closing = false;
  /** Killed at close before it had any request: its end is no news. */
  private dismissed = false;

  constructor(
    private readonly log: (line: string) => void,
    private readonly script: string = FORK_SERVER_SCRIPT,
  ) {
    if (!fs.existsSync(script))
      throw new Error(`the raider spawner ${script} is missing: this installation of raider-hall is incomplete; reinstall it`);
  }

  /** Starts the fork server now, so that the first run does not wait for it. */
  start(): void {
    this.ensure();
  }

  /** Starts a process; the watcher hears of it. Returns a function that stops listening. */
  spawn(request: SpawnRequest, watcher: SpawnWatcher): () => void {
    const child = this.ensure();
    const id = this.nextId++;
    this.watches.set(id, { watcher });
    const message = {
      id,
      command: request.command,
      args: request.args,
      env: request.env,
      cwd: request.cwd,
      stdout: request.stdoutPath,
      stderr: request.stderrPath,
      ...definedFields({ stderrPrefix: request.stderrPrefix }),
    };
    child.stdin.write(`${JSON.stringify(message)}\n`);
    return () => this.watches.delete(id);
  }

  /** Ends the fork server (after the hall's last run is over) and waits for it to exit. */
  async close(): Promise<void> {
    this.closing = true;
    const child = this.child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // A fork server that never had a request has no raider's stderr to carry: it need not
    // finish booting (a Node start-up of a few hundred ms) only to exit.
    if (this.nextId === 1) {
      this.dismissed = true;
      child.kill('SIGKILL');
    } else child.stdin.end();
    await exited;
  }

  private ensure(): ChildProcessByStdio<Writable, Readable, null> {
    if (this.child !== null) return this.child;
    if (this.closing) throw new Error('the hall is stopping');
    // A bare environment and no loader flags: the script is plain CommonJS, and each
    // raider's environment comes with its request.
    const child = spawn(process.execPath, ['--v8-pool-size=1', this.script, String(process.pid)], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    this.child = child;
    onLines(child.stdout, (line) => this.receive(line), {
      maxBytes: MAX_LINE_BYTES,
      onFault: (fault) => this.log(`raider spawner said something unreadable: ${describeLineFault(fault)}`),
    });
    // A write to a fork server that has just died fails here; its exit handler reports the rest.
    child.stdin.on('error', () => {});
    const ended = (why: string) => {
      if (this.child !== child) return;
      this.child = null;
      if (this.closing && (why === 'exit code 0' || this.dismissed)) return;
      this.log(`raider spawner ended (${why}); a new one starts with the next run`);
      const watches = [...this.watches.values()];
      this.watches.clear();
      for (const watch of watches) {
        if (watch.exit) watch.watcher.exited(watch.exit.code, watch.exit.signal);
        else watch.watcher.lost(watch.pid);
      }
    };
    // Only when it could not be started at all: no exit event follows then.
    child.once('error', (err) => ended(err.message));
    child.once('exit', (code, signal) => ended(signal !== null ? `signal ${signal}` : `exit code ${String(code)}`));
    return child;
  }

  private receive(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.log(`raider spawner said something that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    const read = ServerMessage.safeParse(parsed);
    if (!read.success) {
      this.log(
        `raider spawner sent a report this hall cannot read (is libexec/raider-spawner.cjs from another version? reinstall raider-hall): ${line.slice(0, 200)}`,
      );
      return;
    }
    const message = read.data;
    const watch = this.watches.get(message.id);
    if (watch === undefined) return;
    if ('pid' in message) {
      watch.pid = message.pid;
      watch.watcher.spawned(message.pid);
    } else if ('error' in message) {
      this.watches.delete(message.id);
      watch.watcher.failed(message.error);
    } else if (watch.exit === undefined) {
      // Told on the next turn of the event loop: a raider that ends at once has its pid and
      // its exit read in one chunk, and what the pid set going (the spawn's reply) goes
      // out before the hall spends its time on the end of the run.
      watch.exit = { code: message.code, signal: message.signal };
      setImmediate(() => this.tellExit(message.id, watch));
    }
  }

  private tellExit(id: number, watch: Watch): void {
    // Gone meanwhile: its watcher stopped listening, or the fork server's end told it.
    if (this.watches.get(id) !== watch || watch.exit === undefined) return;
    this.watches.delete(id);
    watch.watcher.exited(watch.exit.code, watch.exit.signal);
  }
}
