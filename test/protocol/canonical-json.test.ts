import stringify from 'safe-stable-stringify';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/protocol/canonical-json.js';

describe('canonicalJson', () => {
  it('writes what safe-stable-stringify writes, sorted or not', () => {
    const values: unknown[] = [
      null,
      'x',
      -0,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      [1, undefined, 'a', null],
      { b: 1, a: [{ z: 1, y: { d: undefined, c: 'q' } }], c: undefined },
      { a: 1, b: [{ mission_id: 'm', position: 1, slot: '1q' }], c: { x: 'snow \u2603 \ud800 "q" \\ \n' } },
      { 10: 'ten', 9: 'nine', a: true },
      { running: 1, root: '/r', waiting: Array.from({ length: 50 }, (_, i) => ({ mission_id: `m-${i}`, position: i + 1, slot: '1q' })) },
      { when: new Date(0), nested: { empty: {}, list: [] } },
      Object.assign(Object.create(null), { b: 2, a: 1 }),
    ];
    for (const value of values) expect(canonicalJson(value)).toBe(stringify(value) ?? 'null');
  });
});
