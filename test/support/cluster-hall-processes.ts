// Hall processes of the shared-cluster tests: real `raider hall start`
// processes on roots of their own, against one PostgreSQL database.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach } from 'vitest';
import { type EventTap, request } from './hall-client.js';

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

/**
 * Runs of the fake raider `bjorn` that hold a hall's room until released, so that a test with
 * `max_running: 1` halls steers a mission to the other hall: `hold(label)` submits one through `via`
 * and resolves with the hall that started it; `release(label)` lets it end.
 */
export function roomHolders(
  via: HallProcess,
  events: EventTap,
  halls: readonly HallProcess[],
  dir: string,
): { hold(label: string): Promise<HallProcess>; release(label: string): void } {
  const byId = new Map(halls.map((h) => [h.id, h]));
  return {
    async hold(label) {
      const held = await request(via.socket, { cmd: 'spawn', name: 'bjorn', mission: `until ${path.join(dir, label)}` });
      const spawned = await events.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === held.mission_id);
      const hall = byId.get(spawned.hall);
      if (!hall) throw new Error(`spawned on ${spawned.hall}`);
      return hall;
    },
    release(label) {
      fs.writeFileSync(path.join(dir, label), '');
    },
  };
}
