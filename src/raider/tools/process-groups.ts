/**
 * The process groups a run's tools started (what other raiders call
 * `terminate_children`). Each `bash` command runs in its own group, so a
 * signal aimed at the raider alone would never reach it; on cancel,
 * interrupt or timeout a group gets SIGTERM, then SIGKILL once the grace is
 * over, and counts as gone only when no process of it is left.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { errorCode } from '../../domain/error-message.js';

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
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') return true;
  }
  return false;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
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
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(POLL_MS);
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, 'SIGKILL');
  // SIGKILL cannot be refused; this only waits for the kernel (and our reaper).
  for (let i = 0; i < 40 && groupAlive(pgid); i++) await sleep(POLL_MS);
}

export class ProcessGroups {
  private readonly live = new Set<number>();
  private readonly ending = new Map<number, Promise<void>>();

  /** Track a child started with `detached: true` (its pid is its group id). */
  add(child: ChildProcess): void {
    const pgid = child.pid;
    if (pgid === undefined) return;
    this.live.add(pgid);
    child.once('exit', () => {
      // The leader is gone; members it left behind still count until the group is empty.
      if (!groupAlive(pgid)) this.live.delete(pgid);
    });
  }

  /** End one group (idempotent: a second call waits for the first). */
  terminate(pgid: number, graceMs?: number): Promise<void> {
    let ending = this.ending.get(pgid);
    if (!ending) {
      ending = terminateGroup(pgid, graceMs).finally(() => this.live.delete(pgid));
      this.ending.set(pgid, ending);
    }
    return ending;
  }

  /** End every group still alive and wait for all terminations under way. */
  async terminateAll(graceMs?: number): Promise<void> {
    for (const pgid of [...this.live]) {
      if (groupAlive(pgid)) void this.terminate(pgid, graceMs);
      else this.live.delete(pgid);
    }
    await Promise.all(this.ending.values());
  }
}
