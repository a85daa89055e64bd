// Hall processes of the shared-cluster tests: real `raider hall start`
// processes on roots of their own, against one PostgreSQL database.
import type { ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';
import type { EventTap } from './hall-client.js';

/** A hall process of a shared cluster: its `hall_id`, root and control socket. */
export interface HallProcess {
  id: string;
  root: string;
  socket: string;
  child: ChildProcess;
}

/**
 * Ends a hall process and waits for its exit. SIGCONT first: a test may have
 * stopped it (a stalled hall), and a stopped process does not act on SIGTERM.
 */
export async function stopHall(h: HallProcess): Promise<void> {
  if (h.child.exitCode !== null || h.child.signalCode !== null) return;
  const exited = new Promise((resolve) => h.child.once('exit', resolve));
  h.child.kill('SIGCONT');
  h.child.kill('SIGTERM');
  await exited;
}

/** The halls and event taps a test file starts; each test's are closed when it ends. */
export function closedAfterEachTest(): { halls: HallProcess[]; taps: EventTap[] } {
  const started = { halls: [] as HallProcess[], taps: [] as EventTap[] };
  afterEach(async () => {
    for (const tap of started.taps.splice(0)) tap.close();
    await Promise.all(started.halls.splice(0).map((h) => stopHall(h)));
  });
  return started;
}
