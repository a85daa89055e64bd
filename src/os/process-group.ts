/**
 * Process groups seen from a process that signals them: whether any process
 * of a group is still alive, ending a group (SIGTERM, then SIGKILL after a
 * grace), and whether this process leads a group of its own. The built-in
 * raider ends its tools' groups with these; the ACP bridge its agent's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { errorCode } from '../domain/error-message.js';

/** TERM-to-KILL grace: a second to clean up, so the group is gone within 2 s of a cancel. */
export const TERMINATE_GRACE_MS = 1000;
const POLL_MS = 25;

/**
 * Is any process of the group still running? kill(-pgid, 0) also counts
 * zombies, and members orphaned by the group's leader wait as zombies until
 * init reaps them — which can take seconds in a container. On Linux /proc
 * tells the living from the dead.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return errorCode(err) === 'EPERM';
  }
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return true; // no /proc: trust kill()
  }
  for (const pid of pids) {
    let fields: string[];
    try {
      fields = statFields(Number(pid));
    } catch {
      continue; // gone meanwhile
    }
    const [state, , pgrp] = fields;
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') return true;
  }
  return false;
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** SIGTERM the group, SIGKILL what is left after `graceMs`, resolve when none of it is left. */
export async function terminateGroup(pgid: number, graceMs: number = TERMINATE_GRACE_MS): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  await awaitGroupGone(pgid, graceMs);
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, 'SIGKILL');
  // SIGKILL cannot be refused; this only waits for the kernel (and our reaper).
  await awaitGroupGone(pgid, 40 * POLL_MS);
}

/** Resolves once none of the group is alive, or after `limitMs` whatever is left. */
export async function awaitGroupGone(pgid: number, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(POLL_MS);
}

/** The fields of /proc/PID/stat after the command name ("pid (comm) state ppid pgrp ..."): comm may hold spaces and parentheses. */
function statFields(pid: number | 'self'): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * Whether this process leads its process group: a raider the hall starts does
 * (the hall ends that group at the run's end); one started from a shell is a
 * member of the shell's job. False where /proc cannot tell.
 */
export function leadsOwnGroup(): boolean {
  try {
    return Number(statFields('self')[2]) === process.pid;
  } catch {
    return false;
  }
}
