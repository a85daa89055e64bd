import { describe, expect, it } from 'vitest';
import type { Mission } from '../../src/domain/mission.js';
import { MissionQueue } from '../../src/domain/mission-queue.js';

const m = (i: number): Mission => ({ id: `m-${i}`, name: '1q', mission: `mission ${i}` });
const ids = (q: MissionQueue): string[] => q.toArray().map((x) => x.id);

describe('MissionQueue', () => {
  it('keeps FIFO order through pushes and shifts', () => {
    let q = MissionQueue.empty;
    for (let i = 0; i < 5; i++) q = q.push(m(i));
    q = q.shift().shift();
    q = q.push(m(5));
    expect(ids(q)).toEqual(['m-2', 'm-3', 'm-4', 'm-5']);
    expect(q.length).toBe(4);
    expect(q.head?.id).toBe('m-2');
    expect([...q].map((x) => x.id)).toEqual(ids(q));
  });

  it('leaves every older version as it was (it is a value in a machine context)', () => {
    const base = MissionQueue.of([m(0), m(1)]);
    const a = base.push(m(2));
    const b = base.push(m(3));
    const c = a.shift();
    const d = c.push(m(4));
    expect(ids(base)).toEqual(['m-0', 'm-1']);
    expect(ids(a)).toEqual(['m-0', 'm-1', 'm-2']);
    expect(ids(b)).toEqual(['m-0', 'm-1', 'm-3']);
    expect(ids(c)).toEqual(['m-1', 'm-2']);
    expect(ids(d)).toEqual(['m-1', 'm-2', 'm-4']);
    expect(ids(MissionQueue.empty)).toEqual([]);
    expect(ids(MissionQueue.empty.push(m(9)))).toEqual(['m-9']);
    expect(MissionQueue.empty.length).toBe(0);
  });

  it('drops dead heads once they are most of the backing array, keeping the order', () => {
    let q = MissionQueue.empty;
    const model: string[] = [];
    const kept: Array<[MissionQueue, string[]]> = [];
    for (let i = 0; i < 5000; i++) {
      q = q.push(m(i));
      model.push(`m-${i}`);
      if (i % 3 !== 0) {
        q = q.shift();
        model.shift();
      }
      if (i % 1000 === 0) kept.push([q, [...model]]);
    }
    expect(ids(q)).toEqual(model);
    expect(q.head?.id).toBe(model[0]);
    // The versions kept along the way still read as they did.
    for (const [version, then] of kept) expect(ids(version)).toEqual(then);
  });

  it('finds and removes by id: the head and one in the middle', () => {
    const q = MissionQueue.of([m(0), m(1), m(2)]);
    expect(q.indexOf('m-1')).toBe(1);
    expect(q.find('m-2')?.mission).toBe('mission 2');
    expect(q.find('m-7')).toBeUndefined();
    expect(ids(q.without('m-0'))).toEqual(['m-1', 'm-2']);
    expect(ids(q.without('m-1'))).toEqual(['m-0', 'm-2']);
    expect(q.without('m-7')).toBe(q);
    expect(ids(q)).toEqual(['m-0', 'm-1', 'm-2']);
  });
});
