/**
 * The ACP agent as the bridge's child process: started in the hall root with
 * stdio pipes, its stderr passed on to ours (the hall puts it in the slot log
 * with the run id) and its last lines kept for the message of a crash.
 *
 * Which process group the agent runs in depends on how the bridge runs:
 * - under a hall the bridge leads a group of its own, and the hall kills that
 *   whole group when the bridge ends or a cancel escalates; the agent stays in
 *   it, so it and whatever it started end with the run even when the bridge
 *   itself is killed;
 * - started by hand, the bridge is one process of a shell's job, which no one
 *   kills as a group; the agent gets a group of its own, and the bridge ends
 *   that group when it stops the agent, and at its own exit whatever the path.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { errorCode, errorMessage } from '../domain/error-message.js';
import { awaitGroupGone, leadsOwnGroup, signalGroup, terminateGroup } from '../os/process-group.js';

/** How many of the agent's last stderr lines a crash message quotes. */
const STDERR_TAIL_LINES = 10;
/** How long the agent has to end after its stdin closes and it gets SIGTERM, before SIGKILL. */
const STOP_GRACE_MS = 1000;
/** How long a hangup waits for the SIGKILLed agent's group to be gone before the bridge dies by it anyway. */
const HANGUP_WAIT_MS = 1000;
/**
 * How long a stop waits, after the agent's exit, for the rest of its stderr: a process it started
 * may hold the pipe open past its exit, and the bridge does not wait for that one.
 */
const STDERR_DRAIN_MS = 200;

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AgentProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves when the agent has exited. */
  readonly exited: Promise<AgentExit>;
  /** Its last stderr lines (at most ten), oldest first. */
  stderrTail(): string[];
  /**
   * Ends the agent: stdin closed, SIGTERM, SIGKILL after a grace. Resolves once it is gone and its
   * last stderr has been passed on, so the bridge may exit at once; never while a hangup ends the bridge.
   * Called again, it is the same stop.
   */
  stop(): Promise<void>;
}

export type AgentStart = { ok: true; agent: AgentProcess } | { ok: false; code: string | undefined; error: string };

export interface AgentSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Where the agent's stderr is passed on: the bridge's stderr, or a warm bridge's run's stderr spool. */
  stderr: (text: string) => void;
}

export function startAgent(spec: AgentSpec): Promise<AgentStart> {
  const ownGroup = !leadsOwnGroup();
  return new Promise((resolve) => {
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(spec.command, [...spec.args], { cwd: spec.cwd, env: spec.env, stdio: ['pipe', 'pipe', 'pipe'], detached: ownGroup });
    } catch (err) {
      resolve({ ok: false, code: errorCode(err), error: errorMessage(err) });
      return;
    }
    // Whatever way the bridge exits (an error, a signal it handles late), the agent does not outlive it.
    const killAtExit = (): void => {
      // Its own group may outlive the agent (what it started): that is killed too.
      if (ownGroup && child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      else if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    process.once('exit', killAtExit);
    // In a group (and session) of its own the agent no longer gets the terminal's hangup: the
    // bridge's does, which ends the agent's group first and then the bridge, as the hangup would.
    // SIGKILL is delivered, not done: the bridge waits (briefly) until the group is gone, so that
    // when the bridge is seen to have died by the hangup, the agent is already gone too.
    // A stop during a hangup never ends: the bridge dies by the hangup, not by whatever follows the stop.
    let hangingUp: Promise<never> | undefined;
    const onHangup = (): void => {
      process.off('SIGHUP', onHangup);
      killAtExit();
      const dieByHangup = (): Promise<never> => {
        process.kill(process.pid, 'SIGHUP');
        return new Promise<never>(() => {});
      };
      hangingUp = ownGroup && child.pid !== undefined ? awaitGroupGone(child.pid, HANGUP_WAIT_MS).then(dieByHangup) : dieByHangup();
    };
    if (ownGroup) process.on('SIGHUP', onHangup);
    const tail: string[] = [];
    let partial = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      spec.stderr(text);
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') tail.push(line);
      tail.splice(0, Math.max(0, tail.length - STDERR_TAIL_LINES));
    });
    // 'exit' may come before the last of its stderr is read; 'close' comes after both.
    const drained = new Promise<void>((done) => child.once('close', () => done()));
    const exited = new Promise<AgentExit>((done) =>
      child.once('exit', (code, signal) => {
        if (!ownGroup) process.off('exit', killAtExit);
        done({ code, signal });
      }),
    );
    // A pipe the agent closed before we wrote to it is an exit, reported as such, not a crash of ours.
    child.stdin.on('error', () => {});
    child.once('error', (err) => resolve({ ok: false, code: errorCode(err), error: errorMessage(err) }));
    child.once('spawn', () => {
      const stderrTail = () => (partial.trim() !== '' ? [...tail, partial].slice(-STDERR_TAIL_LINES) : [...tail]);
      // Once stopped, its group is gone: nothing is left for the exit or a hangup to kill.
      let stopping: Promise<void> | undefined;
      const stop = (): Promise<void> =>
        (stopping ??= (async () => {
          await stopAgent(child, exited, ownGroup);
          process.off('exit', killAtExit);
          process.off('SIGHUP', onHangup);
          await within(drained, STDERR_DRAIN_MS);
          if (hangingUp !== undefined) await hangingUp;
        })());
      resolve({ ok: true, agent: { child, exited, stderrTail, stop } });
    });
  });
}

async function stopAgent(child: ChildProcessWithoutNullStreams, exited: Promise<AgentExit>, ownGroup: boolean): Promise<void> {
  if (ownGroup && child.pid !== undefined) {
    // The agent's group: what it started goes too, also when the agent itself has already exited.
    child.stdin.end();
    await terminateGroup(child.pid, STOP_GRACE_MS);
    await exited;
    return;
  }
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.stdin.end();
  child.kill('SIGTERM');
  if ((await within(exited, STOP_GRACE_MS)) === null) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** How the agent ended, for a person: `exit code 3`, `killed by SIGKILL`. */
export function exitText(exit: AgentExit): string {
  return exit.signal !== null ? `killed by ${exit.signal}` : `exit code ${exit.code ?? 0}`;
}

/** What `settles` resolves with, or null when it has not within `ms`. */
export function within<T>(settles: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([settles, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}
