/**
 * One raider OS process, as an actor: started in a process group of its own
 * with stdout into its events file and stderr appended to the slot log (each
 * line prefixed with the run id by the fork server); told
 * SIGINT or SIGTERM (the raider cleans up its tools) or SIGKILL (the whole
 * group). A run is over only when the process has exited, and whatever it
 * left behind in its group is killed then. Stopping the actor kills the group.
 * The fork server starts the process and reports its exit; signals go from the
 * hall straight to the process. It is asked only once the run's record is
 * written (record-written.ts): at once when it is, as it almost always is.
 */
import os from 'node:os';
import { fromCallback } from 'xstate';
import type { ForkServer } from '../adapters/os/fork-server.js';
import { processAlive } from '../adapters/os/process-alive.js';
import { holdEventsFile, releaseEventsFile } from '../adapters/storage/events-file.js';
import type { ProcessExit } from '../domain/outcome.js';
import type { ProcessCommand, ProcessInput, RunEvent, RunSignal } from '../machines/run.machine.js';
import { errorMessage } from '../domain/error-message.js';
import { raiderLinePrefix } from '../domain/log-lines.js';
import type { RecordWritten } from './record-written.js';

/** How often a process adopted from a previous hall (or a lost fork server) is checked: it is not our child. */
const ADOPTED_POLL_MS = 250;

/** Told of each signal the hall sends a raider (the bus shows the steps of a cancel). */
export type SignalSent = (runId: string, pid: number, signal: RunSignal) => void;

/** Raider processes started through the hall's fork server, each once its run's record is written. */
export function raiderProcessLogic(forkServer: ForkServer, recordWritten: RecordWritten, onSignal: SignalSent = () => {}) {
  return fromCallback<ProcessCommand, ProcessInput>(({ input, sendBack, receive }) => {
    const send = (event: RunEvent) => sendBack(event);
    const sendSignal = (p: number, sig: RunSignal) => {
      onSignal(input.runId, p, sig);
      signal(p, sig);
    };
    if (input.adoptedPid !== undefined) return watchAdopted(input.adoptedPid, send, receive, sendSignal);
    if (!input.spawn) {
      send({ type: 'proc.failed', error: 'nothing to start', at: Date.now() });
      return undefined;
    }
    const spec = input.spawn;
    let pid: number | undefined;
    let exited = false;
    let stopWatching: (() => void) | undefined;
    let stopped = false;
    const fail = (error: string) => {
      exited = true;
      releaseEventsFile(input.eventsPath);
      send({ type: 'proc.failed', error, at: Date.now() });
    };
    const start = () => {
      try {
        // The reap reads the result through this, even if the file is deleted meanwhile.
        holdEventsFile(input.eventsPath);
        stopWatching = forkServer.spawn(
          {
            command: spec.command,
            args: spec.args,
            env: spec.env,
            cwd: spec.cwd,
            stdoutPath: input.eventsPath,
            stderrPath: input.logPath,
            stderrPrefix: raiderLinePrefix(input.runId),
          },
          {
            spawned: (p) => {
              pid = p;
              send({ type: 'proc.spawned', pid: p, at: Date.now() });
            },
            failed: fail,
            exited: (code, sig) => {
              exited = true;
              send({ type: 'proc.exited', exit: exitOf(code, sig), at: Date.now() });
            },
            lost: (p) => {
              if (p === undefined) fail('the raider spawner ended before the raider started');
              else stopWatching = watchAdopted(p, send, () => {}, sendSignal);
            },
          },
        );
      } catch (e) {
        fail(errorMessage(e));
      }
    };
    const waiting = recordWritten({ runId: input.runId, logPath: input.logPath });
    if (waiting === null) start();
    else
      waiting.done.then(
        () => {
          if (!stopped) start();
        },
        (err: unknown) => {
          if (!stopped) fail(errorMessage(err));
        },
      );

    receive((command) => {
      if (pid === undefined || exited) return;
      sendSignal(pid, command.signal);
    });
    return () => {
      stopped = true;
      waiting?.stop();
      stopWatching?.();
      if (pid !== undefined && !exited) killGroup(pid);
    };
  });
}

function watchAdopted(
  pid: number,
  send: (e: RunEvent) => void,
  receive: (fn: (c: ProcessCommand) => void) => void,
  sendSignal: (pid: number, sig: RunSignal) => void,
) {
  let gone = false;
  const timer = setInterval(() => {
    if (processAlive(pid)) return;
    gone = true;
    clearInterval(timer);
    killGroup(pid);
    send({ type: 'proc.exited', exit: null, at: Date.now() });
  }, ADOPTED_POLL_MS);
  receive((command) => {
    if (!gone) sendSignal(pid, command.signal);
  });
  return () => clearInterval(timer);
}

function signal(pid: number, sig: RunSignal): void {
  try {
    if (sig === 'SIGKILL') killGroup(pid);
    else process.kill(pid, sig);
  } catch {
    // Already gone: its exit is on its way.
  }
}

function killGroup(pgid: number): void {
  // At every run's end the group is usually empty already (ESRCH): an error
  // without a stack trace costs a fraction of one with it.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // No process left in the group.
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

function exitOf(code: number | null, signal: NodeJS.Signals | null): ProcessExit {
  return {
    code: signal ? null : code,
    signal,
    signalNumber: signal ? (os.constants.signals[signal] ?? null) : null,
  };
}
