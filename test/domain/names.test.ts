import { describe, expect, it } from 'vitest';
import { SAFE_RAIDER_NAME, raiderNameProblem } from '../../src/domain/names.js';
import { isRecord } from '../../src/domain/records.js';
import { isSafeRunId } from '../../src/domain/run-id.js';

describe('one rule for raider names, run ids and plain records', () => {
  it('accepts 1 to 64 name characters starting with a letter or digit', () => {
    for (const name of ['bjorn', '1bjorn', 'a_b-c', 'x'.repeat(64)]) expect(SAFE_RAIDER_NAME.test(name)).toBe(true);
    for (const name of ['', '_x', '-x', 'a b', 'a/b', 'a.b', 'x'.repeat(65)]) expect(SAFE_RAIDER_NAME.test(name)).toBe(false);
    expect(raiderNameProblem('a/b')).toMatch(/invalid raider name/);
  });

  it('takes a run id as a file name only when its slot is a safe name', () => {
    expect(isSafeRunId('1bjorn-1764643200')).toBe(true);
    expect(isSafeRunId('bjorn-1764643200.3')).toBe(true);
    expect(isSafeRunId('my-raider-1764643200')).toBe(true);
    expect(isSafeRunId('../x-1764643200')).toBe(false);
    expect(isSafeRunId('.hidden-1764643200')).toBe(false);
    expect(isSafeRunId('bjorn')).toBe(false);
    expect(isSafeRunId('bjorn-12x')).toBe(false);
  });

  it('counts only plain objects as records', () => {
    expect(isRecord({ a: 1 })).toBe(true);
    expect(isRecord(null)).toBe(false);
    expect(isRecord([1])).toBe(false);
    expect(isRecord('x')).toBe(false);
  });
});
