/**
 * The session's single-writer lock: an exclusive,
 * non-blocking flock(2) on `<id>.lock`, held until released or until the
 * process dies — the kernel drops it then, so there are no stale locks, and
 * it is the very same lock other implementations of the raider take, so they interoperate.
 *
 * Node has no flock. Rather than a native addon (fs-ext builds here, but it
 * needs a C++ toolchain and node headers on every machine that installs the
 * package, and npm 11 gates its install script), we let a helper take the
 * lock for us: we open the lock file ourselves and hand that open file to
 * `flock -n 3` (util-linux) as its fd 3. A flock belongs to the open file
 * description, not to the process that called flock(2), so when the helper
 * exits the lock stays held through our own descriptor — and dies with it.
 * Our descriptor is close-on-exec (libuv opens files with O_CLOEXEC), so
 * tool processes we start later never inherit, and never keep, the lock.
 * Where flock(1) is missing (macOS), perl's flock() does the same job.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

export interface HeldLock {
  readonly path: string;
  /** Drop the lock (closing our descriptor releases it). The file stays. */
  release(): void;
}

/** Exit status a helper uses for "somebody else holds it". */
const HELD = 75;

interface Helper {
  cmd: 'flock' | 'perl';
  args: string[];
}

export type LockHelperName = Helper['cmd'];

const HELPERS: readonly Helper[] = [
  { cmd: 'flock', args: ['--nonblock', '--exclusive', '--conflict-exit-code', String(HELD), '3'] },
  {
    cmd: 'perl',
    args: [
      '-MFcntl=:flock',
      '-e',
      `open(my $fh, ">&=", 3) or exit 2; flock($fh, LOCK_EX | LOCK_NB) and exit 0; exit($!{EWOULDBLOCK} ? ${HELD} : 2)`,
    ],
  },
];

/** The helper that worked last time, so a process probes for it once. */
let preferred: Helper | undefined;

export class LockUnavailableError extends Error {}

/**
 * Take the exclusive lock on `path` (created if needed) without waiting.
 * Resolves to the held lock, or to `undefined` when another holder has it.
 */
export async function tryLockExclusive(path: string, opts: { helper?: LockHelperName } = {}): Promise<HeldLock | undefined> {
  const fd = openSync(path, 'a');
  try {
    const status = await lockThroughHelper(fd, opts.helper);
    if (status === HELD) {
      closeSync(fd);
      return undefined;
    }
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  let open = true;
  return {
    path,
    release() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

async function lockThroughHelper(fd: number, only: LockHelperName | undefined): Promise<number> {
  const helpers = only ? HELPERS.filter((h) => h.cmd === only) : preferred ? [preferred] : HELPERS;
  const problems: string[] = [];
  for (const helper of helpers) {
    const result = await runHelper(helper, fd);
    if (result.missing) {
      problems.push(`${helper.cmd}: not found`);
      continue;
    }
    if (result.status === 0 || result.status === HELD) {
      if (!only) preferred = helper;
      return result.status;
    }
    problems.push(`${helper.cmd}: exit ${result.status}${result.stderr ? `: ${result.stderr.trim()}` : ''}`);
  }
  throw new LockUnavailableError(`cannot take a flock (${problems.join('; ')})`);
}

function runHelper(helper: Helper, fd: number): Promise<{ missing: boolean; status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(helper.cmd, helper.args, { stdio: ['ignore', 'ignore', 'pipe', fd] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err: NodeJS.ErrnoException) => resolve({ missing: err.code === 'ENOENT', status: null, stderr }));
    child.on('close', (status) => resolve({ missing: false, status, stderr }));
  });
}
