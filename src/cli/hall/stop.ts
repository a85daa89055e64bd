/**
 * `raider hall stop`: SIGTERM to this root's hall, and wait until it has
 * exited. No hall there is success (exit 0), as `systemctl stop` of a
 * stopped unit is: what the caller wanted is true.
 */
import { processAlive } from '../../adapters/os/process-alive.js';
import { hallPaths } from '../../ports/hall-paths.js';
import { errorMessage } from '../../domain/error-message.js';
import { readHallPid, removeStalePidFile } from './hall-pid.js';

const STOP_TIMEOUT_MS = 20_000;

/** What `stop` did; `--json` prints it as it is. */
export type StopOutcome =
  /** The hall was sent SIGTERM and has exited (`signalled`: with `--no-wait`, not waited for). */
  | { result: 'stopped' | 'signalled'; pid: number }
  /** No hall ran; a pid file left behind is named and was removed. */
  | { result: 'not_running'; stale_pid?: number; stale_reason?: 'gone' | 'not_this_hall' };

/** A stop that failed: exit 1, and `code` under `--json`. */
export class StopError extends Error {
  readonly exitCode = 1;
  constructor(
    readonly code: 'invalid_pid_file' | 'signal_failed' | 'stop_timeout',
    message: string,
  ) {
    super(message);
  }
}

/** `onSignalled`: told as soon as SIGTERM is sent, before the wait (the text says so at once). */
export async function stopHall(dir: string, wait: boolean, onSignalled: (pid: number) => void): Promise<StopOutcome> {
  const paths = hallPaths(dir);
  const found = await readHallPid(paths);
  switch (found.kind) {
    case 'none':
      return { result: 'not_running' };
    case 'invalid':
      throw new StopError('invalid_pid_file', `Invalid PID file ${paths.pidFile}`);
    case 'stale':
      // Never signal it: the pid may now belong to any process.
      removeStalePidFile(paths, found.text);
      return { result: 'not_running', stale_pid: found.pid, stale_reason: found.reason };
    case 'ours':
      break;
  }
  const { pid } = found;
  try {
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    throw new StopError('signal_failed', `Failed to send TERM to ${pid}: ${errorMessage(err)}`);
  }
  onSignalled(pid);
  if (!wait) return { result: 'signalled', pid };
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (processAlive(pid)) {
    if (Date.now() > deadline)
      throw new StopError('stop_timeout', `The hall (PID ${pid}) has not stopped after ${STOP_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { result: 'stopped', pid };
}

export function signalledText(pid: number): string {
  return `Sent TERM to hall PID ${pid}\n`;
}

/** Why no hall was stopped, in words for stdout. */
export function notRunningText(dir: string, outcome: StopOutcome & { result: 'not_running' }): string {
  if (outcome.stale_pid === undefined) return `No hall runs in ${dir}.\n`;
  return outcome.stale_reason === 'gone'
    ? `No hall runs in ${dir}: the hall (PID ${outcome.stale_pid}) died without stopping; its stale pid file was removed.\n`
    : `No hall runs in ${dir}: its pid file named PID ${outcome.stale_pid}, which is not this hall; the stale pid file was removed.\n`;
}
