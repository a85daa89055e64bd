/**
 * The process groups a run's tools started (what other raiders call
 * `terminate_children`). Each `bash` command runs in its own group, so a
 * signal aimed at the raider alone would never reach it; on cancel,
 * interrupt or timeout a group gets SIGTERM, then SIGKILL once the grace is
 * over, and counts as gone only when no process of it is left.
 */
import type { ChildProcess } from 'node:child_process';
import { groupAlive, terminateGroup } from '../../os/process-group.js';

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
