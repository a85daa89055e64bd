/**
 * The charts' raider axis (web/dashboard/chart-axes.js, a plain module the
 * browser loads as it is), in Node: its labels never get less room than they
 * need; uPlot, drawing on a canvas, would let them run together.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: the page's own JavaScript, without types.
import { nameAxis } from '../../web/dashboard/chart-axes.js';

const CHAR_PX = 7;
const names = (n: number, length: number): string[] =>
  Array.from({ length: n }, (_, i) => `${String(i).padStart(2, '0')}${'x'.repeat(length - 2)}`);

describe('the Durations axis', () => {
  it('keeps a few short names level, each within its share of the width', () => {
    const axis = nameAxis(['bjorn', 'ivar', 'olaf'], 600);
    expect(axis).toMatchObject({ labels: ['bjorn', 'ivar', 'olaf'], every: 1, rotate: 0 });
  });

  it('turns names that would touch, and makes the axis high enough for the longest', () => {
    const axis = nameAxis(names(10, 13), 330);
    expect(axis.rotate).toBe(-45);
    expect(axis.every).toBe(1);
    expect(axis.size).toBeGreaterThanOrEqual(13 * CHAR_PX * Math.SQRT1_2);
  });

  it('shows every k-th name when even turned ones would overlap, and cuts long names', () => {
    const axis = nameAxis(names(60, 40), 330);
    expect(axis.every).toBeGreaterThan(1);
    // Turned 45 degrees, a label needs about a line's height over the cosine along the axis (24 px).
    expect((330 / 60) * axis.every).toBeGreaterThanOrEqual(24);
    expect(axis.labels[0]).toHaveLength(16);
    expect(axis.labels[0].endsWith('…')).toBe(true);
  });
});
