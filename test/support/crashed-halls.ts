/**
 * Hall processes a test kills with SIGKILL, and raiders meant to outlive
 * them: whatever a test leaves of either goes after it.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';

export interface CrashedHalls {
  /** A hall process to kill after the test, if it still runs. */
  hall(hall: ChildProcess): ChildProcess;
  /** A raider (its process group) to kill after the test, if it still runs. */
  raider(pid: number): void;
}

/** Call it at the top of a test file (it registers the file's afterEach). */
export function useCrashedHalls(): CrashedHalls {
  let halls: ChildProcess[] = [];
  let raiders: number[] = [];
  afterEach(() => {
    for (const h of halls) h.kill('SIGKILL');
    halls = [];
    for (const pid of raiders) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    raiders = [];
  });
  return {
    hall: (hall) => {
      halls.push(hall);
      return hall;
    },
    raider: (pid) => {
      raiders.push(pid);
    },
  };
}

/** Kills the hall process with SIGKILL and waits until it is gone. */
export async function crash(hall: ChildProcess): Promise<void> {
  if (hall.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    hall.once('exit', () => resolve());
    hall.kill('SIGKILL');
  });
}
