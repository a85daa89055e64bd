/**
 * The hall's heap growing factor (src/adapters/os/heap-growth.ts): its
 * default, the variable that overrides it, and a bad value reported by a
 * real `raider hall start --daemon` on its starter's terminal, naming the
 * variable, while the hall starts anyway. The flag it sets is one this
 * Node's V8 knows (an unknown one would be ignored without a word).
 */
import { spawnSync } from 'node:child_process';
import v8 from 'node:v8';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_HEAP_GROWING_PERCENT, heapGrowingPercent, limitHeapGrowth } from '../../src/adapters/os/heap-growth.js';
import { alive, hall, hallRoot, removeRoots } from './cli-helpers.js';

vi.setConfig({ testTimeout: 60_000 });
afterAll(removeRoots);

describe('the heap growing factor', () => {
  it('defaults to 2x, and takes a whole percent from 0 (V8 decides) to 1000 from the variable', () => {
    expect(DEFAULT_HEAP_GROWING_PERCENT).toBe(100);
    expect(heapGrowingPercent({})).toBe(100);
    expect(heapGrowingPercent({ RAIDER_HALL_HEAP_GROWING_PERCENT: '' })).toBe(100);
    expect(heapGrowingPercent({ RAIDER_HALL_HEAP_GROWING_PERCENT: '0' })).toBe(0);
    expect(heapGrowingPercent({ RAIDER_HALL_HEAP_GROWING_PERCENT: '250' })).toBe(250);
    for (const bad of ['-1', '1001', '1.5', 'lots']) {
      const got = heapGrowingPercent({ RAIDER_HALL_HEAP_GROWING_PERCENT: bad });
      expect(got).toBeInstanceOf(Error);
      expect(String(got)).toContain(`RAIDER_HALL_HEAP_GROWING_PERCENT must be a whole number from 0 to 1000 (0: V8's own), not "${bad}"`);
    }
  });

  it('sets the factor as a V8 flag this Node knows, and none for 0 or a bad value', () => {
    const set = vi.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
    try {
      const warnings: string[] = [];
      limitHeapGrowth((w) => warnings.push(w), {});
      limitHeapGrowth((w) => warnings.push(w), { RAIDER_HALL_HEAP_GROWING_PERCENT: '0' });
      limitHeapGrowth((w) => warnings.push(w), { RAIDER_HALL_HEAP_GROWING_PERCENT: 'lots' });
      expect(set.mock.calls).toEqual([['--heap-growing-percent=100']]);
      expect(warnings).toHaveLength(1);
    } finally {
      set.mockRestore();
    }
    expect(spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout).toContain('--heap-growing-percent');
  });

  it("a bad value is said on the terminal of start --daemon, and the hall starts with V8's own factor", async () => {
    const root = hallRoot();
    const started = await hall(['start', '--daemon'], root, { env: { RAIDER_HALL_HEAP_GROWING_PERCENT: 'lots' } });
    const pid = Number(/^Hall started with PID (\d+)\n$/.exec(started.stdout)?.[1] ?? 0);
    try {
      expect(started.code, started.stderr).toBe(0);
      expect(started.stderr).toContain('RAIDER_HALL_HEAP_GROWING_PERCENT must be a whole number from 0 to 1000');
      expect((await hall(['stop'], root)).code).toBe(0);
    } finally {
      if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
