/** The disk reserve on a real directory, with a clock we move by hand. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiskReserve, RESERVE_FILE } from '../../src/adapters/storage/disk-reserve.js';
import { tempRoot } from '../support/hall-client.js';

function reserveIn() {
  const dir = tempRoot('reserve-');
  const warnings: string[] = [];
  let now = 1_000_000;
  const reserve = new DiskReserve(
    dir,
    (m) => warnings.push(m),
    () => now,
  );
  return { dir, warnings, reserve, advance: (ms: number) => (now += ms) };
}

describe('DiskReserve', () => {
  it('holds a file of free space until it is spent, then says the disk is full', () => {
    const { dir, warnings, reserve } = reserveIn();
    reserve.take();
    expect(fs.statSync(path.join(dir, RESERVE_FILE)).size).toBeGreaterThan(0);
    expect(reserve.full).toBeNull();
    reserve.spend('ENOSPC: no space left on device');
    expect(fs.existsSync(path.join(dir, RESERVE_FILE))).toBe(false);
    expect(reserve.full).toBe(
      `the state directory ${dir} is full (ENOSPC: no space left on device); new missions are refused until there is room`,
    );
    expect(warnings).toEqual([reserve.full]);
  });

  it('makes a spent reserve again at most once a second, and says so once', () => {
    const { dir, warnings, reserve, advance } = reserveIn();
    reserve.take();
    reserve.spend('ENOSPC');
    expect(reserve.retry()).toBe(false);
    expect(fs.existsSync(path.join(dir, RESERVE_FILE))).toBe(false);
    advance(1000);
    expect(reserve.retry()).toBe(true);
    expect(reserve.full).toBeNull();
    expect(fs.existsSync(path.join(dir, RESERVE_FILE))).toBe(true);
    expect(warnings.at(-1)).toBe(`the state directory ${dir} has room again`);
    expect(reserve.retry()).toBe(true);
    expect(warnings).toHaveLength(2);
  });

  it('a reserve that cannot be written at start counts as spent', () => {
    const reserve = new DiskReserve(path.join(tempRoot('reserve-'), 'gone'), () => {});
    reserve.take();
    expect(reserve.full).toMatch(/cannot keep its reserve of free space/);
  });
});
