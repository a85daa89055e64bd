/**
 * One raider OS process, as an actor: started in a process group of its own
 * with stdout into its events file and stderr into the slot log, each line
 * prefixed with the run id (by the hall from the raider's stderr spool, or by
 * the fork server); told SIGINT or SIGTERM (the raider cleans up its tools)
 * or SIGKILL (the whole group). A run is over only when the process has
 * exited, and whatever it left behind in its group is killed then; a warm
 * bridge's run, when the bridge says it exits and its whole group, itself
 * included, is sent SIGKILL (warm-bridges.ts, exitSaid). Stopping
 * the actor kills the group. The hall's raider starter (hall-spawner.ts, or
 * the fork server) starts the process and reports its exit; signals go from
 * the hall straight to the process. It is asked only once the run's record is
 * written (record-written.ts): at once when it is, as it almost always is.
 */
import os from 'node:os';
import { fromCallback } from 'xstate';
import type { RaiderStarter, SpawnRequest, SpawnWatcher } from '../adapters/os/fork-server.js';
import type { SparePool } from './warm-bridges.js';
import { StderrSpool, stderrSpoolPath } from '../adapters/os/stderr-spool.js';
import { processAlive } from '../adapters/os/process-alive.js';
import { killGroup } from '../adapters/os/process-group.js';
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

/** Raider processes started by the hall (its own posix_spawn or its fork server), each once its run's record is written. */
export function raiderProcessLogic(
  starter: RaiderStarter,
  recordWritten: RecordWritten,
  onSignal: SignalSent = () => {},
  spares?: Pick<SparePool, 'handOver' | 'release'>,
) {
  return fromCallback<ProcessCommand, ProcessInput>(({ input, sendBack, receive }) => {
    const send = (event: RunEvent) => sendBack(event);
    const sendSignal = (p: number, sig: RunSignal) => {
      onSignal(input.runId, p, sig);
      signal(p, sig);
    };
    if (input.adoptedPid !== undefined) {
      // A raider started by the hall itself writes its stderr into a spool: copied on from where the last hall got.
      const spool = new StderrSpool(stderrSpoolPath(input.eventsPath), input.logPath, raiderLinePrefix(input.runId));
      return watchAdopted(input.adoptedPid, send, receive, sendSignal, spool);
    }
    if (!input.spawn) {
      send({ type: 'proc.failed', error: 'nothing to start', at: Date.now() });
      return undefined;
    }
    const spec = input.spawn;
    let pid: number | undefined;
    let exited = false;
    let stopWatching: (() => void) | undefined;
    let stopped = false;
    // A warm bridge the run took is the run's once handed over; until then, a stop ends it.
    let handed = false;
    const fail = (error: string) => {
      exited = true;
      if (spec.spare !== undefined && !handed) spares?.release(spec.spare.id);
      releaseEventsFile(input.eventsPath);
      send({ type: 'proc.failed', error, at: Date.now() });
    };
    const start = () => {
      try {
        // The reap reads the result through this, even if the file is deleted meanwhile.
        holdEventsFile(input.eventsPath);
        const request: SpawnRequest = {
          command: spec.command,
          args: spec.args,
          env: spec.env,
          cwd: spec.cwd,
          stdoutPath: input.eventsPath,
          stderrPath: input.logPath,
          stderrPrefix: raiderLinePrefix(input.runId),
        };
        const watcher: SpawnWatcher = {
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
        };
        // Handed to the warm bridge the run took, as the run's record says; if it is gone, a bridge of its own.
        const toSpare =
          spec.spare !== undefined
            ? (spares?.handOver(spec.spare.id, { ...request, runId: input.runId, bridgeArgs: spec.spare.args }, watcher) ?? null)
            : null;
        handed = toSpare !== null;
        stopWatching = toSpare ?? starter.spawn(request, watcher);
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
      if (spec.spare !== undefined && !handed) spares?.release(spec.spare.id);
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
  spool?: StderrSpool,
) {
  let gone = false;
  spool?.follow();
  const timer = setInterval(() => {
    if (processAlive(pid)) return;
    gone = true;
    clearInterval(timer);
    killGroup(pid);
    const exited = () => send({ type: 'proc.exited', exit: null, at: Date.now() });
    if (spool) spool.finish(exited);
    else exited();
  }, ADOPTED_POLL_MS);
  receive((command) => {
    if (!gone) sendSignal(pid, command.signal);
  });
  return () => {
    clearInterval(timer);
    if (!gone) spool?.stop();
  };
}

function signal(pid: number, sig: RunSignal): void {
  try {
    if (sig === 'SIGKILL') killGroup(pid);
    else process.kill(pid, sig);
  } catch {
    // Already gone: its exit is on its way.
  }
}

function exitOf(code: number | null, signal: NodeJS.Signals | null): ProcessExit {
  return {
    code: signal ? null : code,
    signal,
    signalNumber: signal ? (os.constants.signals[signal] ?? null) : null,
  };
}
