/** `raider hall stop`: SIGTERM to this root's hall, and wait until it has exited. */
import { processAlive } from '../../adapters/os/process-alive.js';
import { hallPaths } from '../../adapters/storage/hall-paths.js';
import { readHallPid, removeStalePidFile } from './hall-pid.js';
import { errorMessage } from '../../domain/error-message.js';

const STOP_TIMEOUT_MS = 20_000;

export async function stopCommand(dir: string, wait: boolean): Promise<number> {
  const paths = hallPaths(dir);
  const found = await readHallPid(paths);
  switch (found.kind) {
    case 'none':
      process.stderr.write('No PID file found. Is the hall running?\n');
      return 1;
    case 'invalid':
      process.stderr.write(`Invalid PID file ${paths.pidFile}\n`);
      return 1;
    case 'stale':
      // Never signal it: the pid may now belong to any process.
      removeStalePidFile(paths, found.text);
      process.stderr.write(`Hall not running (stale pid file removed: PID ${found.pid} is not this hall)\n`);
      return 1;
    case 'ours':
      break;
  }
  const { pid } = found;
  try {
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    process.stderr.write(`Failed to send TERM to ${pid}: ${errorMessage(err)}\n`);
    return 1;
  }
  process.stdout.write(`Sent TERM to hall PID ${pid}\n`);
  if (!wait) return 0;
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (processAlive(pid)) {
    if (Date.now() > deadline) {
      process.stderr.write(`The hall (PID ${pid}) has not stopped after ${STOP_TIMEOUT_MS / 1000} s\n`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return 0;
}
