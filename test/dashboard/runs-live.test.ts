/**
 * The page's Runs table kept from bus events (web/dashboard/runs-live.js, a
 * plain module the browser loads as it is), in Node: its order, and a run
 * pushed off the table by newer ones placed again when it ends.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: the page's own JavaScript, without types.
import { applyRunEvents } from '../../web/dashboard/runs-live.js';

const NO_FILTER = { raider: '', status: '', text: '' };
const spawned = (id: string, time: number) => ({ type: 'raider.spawned', id, slot: 'bjorn', pid: 1, time });
const done = (id: string, time: number) => ({ type: 'raider.done', id, slot: 'bjorn', status: 'completed', time });
const ids = (table: { runs: Array<{ id: string }> }): string[] => table.runs.map((r) => r.id);

describe('the Runs table from bus events', () => {
  it('lists past runs of one second newest first by their suffix: .10 before .9', () => {
    const past = (id: string) => ({ id, slot: 'bjorn', status: 'completed', started_at: 1_000_000, duration: 0 });
    const table = { runs: [past('bjorn-1000.9'), past('bjorn-1000')], total: 2, limit: 50 };
    const next = applyRunEvents(table, [spawned('bjorn-1000.10', 1000), done('bjorn-1000.10', 1000)], NO_FILTER, undefined);
    expect(ids(next.runs)).toEqual(['bjorn-1000.10', 'bjorn-1000.9', 'bjorn-1000']);
  });

  it('places a run pushed off the table again when it ends, without asking the hall', () => {
    const pushedOut = new Map();
    const empty = { runs: [], total: 0, limit: 2 };
    // Three start; the table holds two: the oldest is pushed off while it runs.
    const started = applyRunEvents(
      empty,
      [spawned('bjorn-1000', 1000.1), spawned('bjorn-1000.2', 1000.2), spawned('bjorn-1000.3', 1000.3)],
      NO_FILTER,
      undefined,
      pushedOut,
    );
    expect(ids(started.runs)).toEqual(['bjorn-1000.3', 'bjorn-1000.2']);
    expect([...pushedOut.keys()]).toEqual(['bjorn-1000']);
    // The two newer end first, then the oldest: ended, it is newer than neither, and shows only while there is room.
    const ended = applyRunEvents(
      started.runs,
      [done('bjorn-1000.3', 1001), done('bjorn-1000.2', 1001), done('bjorn-1000', 1001)],
      NO_FILTER,
      undefined,
      pushedOut,
    );
    expect(ended.lookAgain).toBe(false);
    expect(ended.runs.runs.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([
      ['bjorn-1000.3', 'completed'],
      ['bjorn-1000.2', 'completed'],
    ]);
    // A raider filter that does not take it: it is not placed again.
    const other = new Map([['ivar-1000', { id: 'ivar-1000', slot: 'ivar', status: 'running', started_at: 1_000_500, duration: null }]]);
    const filtered = applyRunEvents(
      started.runs,
      [{ ...done('ivar-1000', 1001), slot: 'ivar' }],
      { ...NO_FILTER, raider: 'bjorn' },
      undefined,
      other,
    );
    expect(ids(filtered.runs)).toEqual(['bjorn-1000.3', 'bjorn-1000.2']);
    expect(other.has('ivar-1000')).toBe(true);
  });

  it('draws a polled burst of hundreds of runs in one batch as the hall lists them', () => {
    // The table the page came with: one run still running, 49 ended.
    const past = Array.from({ length: 50 }, (_, i) =>
      i === 0
        ? { id: 'bjorn-999', slot: 'bjorn', status: 'running', started_at: 999_000, duration: null }
        : { id: `bjorn-999.${i + 1}`, slot: 'bjorn', status: 'completed', started_at: 999_000, duration: 0 },
    );
    const burst: Array<Record<string, unknown>> = [];
    // 300 runs start, each ends twenty starts later (the last twenty do not, within the batch); the table's running run ends.
    for (let k = 1; k <= 300; k++) {
      burst.push(spawned(`bjorn-1000.${k}`, 1000 + k / 1000));
      if (k > 20) burst.push(done(`bjorn-1000.${k - 20}`, 1000 + k / 1000));
    }
    burst.push({ ...done('bjorn-999', 1001), status: 'failed' });
    const pushedOut = new Map();
    const drawn = applyRunEvents({ runs: past, total: 50, limit: 50 }, burst, NO_FILTER, undefined, pushedOut);
    // Running first, newest first (the last twenty); then the ended ones, newest first: the fifty newest runs.
    expect(ids(drawn.runs)).toEqual(Array.from({ length: 50 }, (_, i) => `bjorn-1000.${300 - i}`));
    expect(drawn.runs.runs.map((r: { status: string }) => r.status)).toEqual([
      ...Array<string>(20).fill('running'),
      ...Array<string>(30).fill('completed'),
    ]);
    expect(drawn.runs.total).toBe(350);
    expect(drawn.lookAgain).toBe(false);
  });

  it('puts a run back when room opens above it: more ran at once than the table holds, and the newest ended first', () => {
    const pushedOut = new Map();
    const empty = { runs: [], total: 0, limit: 2 };
    // Four run at once; the table holds two: the two newest running.
    const four = ['bjorn-1000', 'bjorn-1000.2', 'bjorn-1000.3', 'bjorn-1000.4'];
    let table = applyRunEvents(
      empty,
      four.map((id, i) => spawned(id, 1000 + i / 10)),
      NO_FILTER,
      undefined,
      pushedOut,
    ).runs;
    expect(ids(table)).toEqual(['bjorn-1000.4', 'bjorn-1000.3']);
    // The newest ends: below the three still running, off the table.
    table = applyRunEvents(table, [done('bjorn-1000.4', 1001)], NO_FILTER, undefined, pushedOut).runs;
    expect(ids(table)).toEqual(['bjorn-1000.3', 'bjorn-1000.2']);
    // The others end: the table shows the two newest runs again, as the hall lists them.
    table = applyRunEvents(
      table,
      [done('bjorn-1000.3', 1002), done('bjorn-1000.2', 1002), done('bjorn-1000', 1002)],
      NO_FILTER,
      undefined,
      pushedOut,
    ).runs;
    expect(ids(table)).toEqual(['bjorn-1000.4', 'bjorn-1000.3']);
    expect(table.runs.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed']);
  });
});
