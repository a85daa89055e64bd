/**
 * The hall's heap growing factor (src/adapters/os/heap-growth.ts): its
 * default, the variable that overrides it, and a bad value reported by a
 * real `raider hall start --daemon` on its starter's terminal, naming the
 * variable, while the hall starts anyway. The flag it sets is one this
 * Node's V8 knows (an unknown one would be ignored without a word).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_HEAP_GROWING_PERCENT,
  DEFAULT_SEMI_SPACE_GROWTH,
  heapGrowingPercent,
  limitHeapGrowth,
  semiSpaceGrowth,
} from '../../src/adapters/os/heap-growth.js';
import { REPO, tempRoot } from '../support/hall-client.js';
import { alive, eventually, hall, hallRoot, removeRoots, request, socketOf, startHallProcess } from './cli-helpers.js';

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
      limitHeapGrowth((w) => warnings.push(w), { RAIDER_HALL_SEMI_SPACE_GROWTH: '0' });
      limitHeapGrowth((w) => warnings.push(w), { RAIDER_HALL_SEMI_SPACE_GROWTH: '17' });
      expect(set.mock.calls).toEqual([
        ['--heap-growing-percent=100'],
        ['--semi-space-growth-factor=1'],
        ['--semi-space-growth-factor=1'],
        ['--semi-space-growth-factor=1'],
        ['--heap-growing-percent=100'],
        ['--heap-growing-percent=100'],
      ]);
      expect(warnings).toHaveLength(2);
      expect(warnings[1]).toContain('RAIDER_HALL_SEMI_SPACE_GROWTH must be a whole number from 0 to 16');
    } finally {
      set.mockRestore();
    }
    const known = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout;
    expect(known).toContain('--heap-growing-percent');
    expect(known).toContain('--semi-space-growth-factor');
  });

  it('keeps the young generation at its start size unless told (0: V8 grows it)', () => {
    expect(DEFAULT_SEMI_SPACE_GROWTH).toBe(1);
    expect(semiSpaceGrowth({})).toBe(1);
    expect(semiSpaceGrowth({ RAIDER_HALL_SEMI_SPACE_GROWTH: '0' })).toBe(0);
    expect(semiSpaceGrowth({ RAIDER_HALL_SEMI_SPACE_GROWTH: '2' })).toBe(2);
    expect(semiSpaceGrowth({ RAIDER_HALL_SEMI_SPACE_GROWTH: 'x' })).toBeInstanceOf(Error);
  });

  it.each([
    ['', 'at most 2 MiB', (mib: number) => expect(mib).toBeLessThanOrEqual(2)],
    ['0', 'more than 2 MiB', (mib: number) => expect(mib).toBeGreaterThan(2)],
  ])(
    'a hall started by raider hall start (RAIDER_HALL_SEMI_SPACE_GROWTH=%j) ends 20 runs with %s of young generation',
    async (growth, _, check) => {
      const root = hallRoot();
      const out = path.join(tempRoot('heap-growth-'), 'memory.json');
      const h = await startHallProcess(root, {
        RAIDER_HALL_SEMI_SPACE_GROWTH: growth,
        BENCH_MEMORY_OUT: out,
        NODE_OPTIONS: `--import ${path.join(REPO, 'bench', 'memory-hook.mjs')}`,
      });
      try {
        for (let i = 0; i < 20; i++)
          expect(await request(socketOf(root), { cmd: 'spawn', name: 'bjorn', mission: `run ${i}` })).toHaveProperty('pid');
        await eventually(async () => expect((await request(socketOf(root), { cmd: 'status' })).running).toBe(0));
        process.kill(h.child.pid as number, 'SIGUSR2');
        const spaces = await eventually(() => JSON.parse(fs.readFileSync(out, 'utf8')).spaces as Record<string, number>);
        check((spaces.new_space ?? 0) / 1024 / 1024);
      } finally {
        await h.stop();
      }
    },
  );

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
