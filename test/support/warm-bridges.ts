/**
 * A hall's warm ACP bridges as `status` shows them (`warm_bridges`,
 * docs/agents.md "Warm bridges"), for the tests of a hall that keeps some.
 */
import path from 'node:path';
import { expect } from 'vitest';
import { eventually, request } from './hall-client.js';

/** One warm bridge of an entry, as `status` lists it. */
export interface WarmSpare {
  pid: number | null;
  ready: boolean;
  age: number;
}

/** The unused warm bridges of `entry` (default `warm`) of the hall in `root`. */
export async function warmSpares(root: string, entry = 'warm'): Promise<WarmSpare[]> {
  const status = await request(path.join(root, '.raider-hall.socket'), { cmd: 'status' });
  return (status.warm_bridges as Record<string, WarmSpare[]> | undefined)?.[entry] ?? [];
}

/** The pid of the entry's ready warm bridge (other than `not`), once there is one. */
export async function readySpare(root: string, not?: number, entry = 'warm'): Promise<number> {
  let pid = 0;
  await eventually(
    async () => {
      const ready = (await warmSpares(root, entry)).find((s) => s.ready && s.pid !== null && s.pid !== not);
      expect(ready).toBeDefined();
      pid = ready?.pid ?? 0;
    },
    30_000,
    20,
  );
  return pid;
}
