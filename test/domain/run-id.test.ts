import { describe, expect, it } from 'vitest';
import { compareRunIds, nextRunId } from '../../src/domain/run-id.js';

describe('run ids', () => {
  it('number the runs of one second .2, .3 ... after the first', () => {
    const first = nextRunId('bjorn', 1_000_500, undefined);
    const second = nextRunId('bjorn', 1_000_900, first.cursor);
    const next = nextRunId('bjorn', 1_001_000, second.cursor);
    expect([first.id, second.id, next.id]).toEqual(['bjorn-1000', 'bjorn-1000.2', 'bjorn-1001']);
  });

  it('order by start: the second, then the suffix (.10 after .9, which text order puts first)', () => {
    const ids = ['bjorn-1001', 'bjorn-1000.10', 'bjorn-1000', 'bjorn-1000.9', 'bjorn-999.11'];
    expect([...ids].sort(compareRunIds)).toEqual(['bjorn-999.11', 'bjorn-1000', 'bjorn-1000.9', 'bjorn-1000.10', 'bjorn-1001']);
    // Not run ids, or of two slots started together: by text.
    expect(compareRunIds('a-5', 'b-5')).toBeLessThan(0);
    expect(compareRunIds('x', 'y')).toBeLessThan(0);
  });
});
