/**
 * The past-run list of the dashboard (src/adapters/dashboard/run-history.ts)
 * against real events files, with the hall's live runs given by hand: a run
 * leaves the live ones just after its raider.done, so a list made in between
 * must not keep it out for good.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunHistory, runFilterSchema } from '../../src/adapters/dashboard/run-history.js';
import { hallPaths } from '../../src/ports/hall-paths.js';
import { tempRoot } from '../support/temp-roots.js';

const FINISHED = '{"elapsed":0.5,"response":"ok","seq":1,"status":"completed","time":0,"type":"run.finished","version":1}\n';

interface Live {
  id: string;
  slot: string;
  pid: number;
}

/** A hall root with `ids` as events files, and queries that list `live` as running. */
function historyOf(ids: string[], live: Live[]): RunHistory {
  const root = tempRoot('run-history-');
  const paths = hallPaths(root);
  fs.mkdirSync(paths.logsDir, { recursive: true });
  for (const id of ids) fs.writeFileSync(path.join(paths.logsDir, `${id}.events.jsonl`), FINISHED);
  const queries = {
    ps: () => ({ raiders: live.map((r) => ({ ...r, base_name: r.slot, mission: `mission of ${r.id}` })) }),
    status: () => ({ running: live.length, root, slots: [], queues: {}, binding_queues: {}, runs: live.map((r) => ({ ...r, age: 1 })) }),
  };
  return new RunHistory(paths, queries);
}

describe('the dashboard run history', () => {
  it('lists a run that left the live ones after the list was made (no raider.done came after)', () => {
    const live: Live[] = [{ id: 'bjorn-1000.2', slot: 'bjorn', pid: 4242 }];
    const history = historyOf(['bjorn-1000', 'bjorn-1000.2'], live);
    const all = runFilterSchema.parse({});
    // Its raider.done has cleared the list, but the hall still lists it as running when a page asks.
    history.changed();
    expect(history.list(all).runs.map((r) => [r.id, r.status])).toEqual([
      ['bjorn-1000.2', 'running'],
      ['bjorn-1000', 'completed'],
    ]);
    // Then it is gone from the live runs, with no event to say so.
    live.splice(0);
    expect(history.list(all).runs.map((r) => [r.id, r.status])).toEqual([
      ['bjorn-1000.2', 'completed'],
      ['bjorn-1000', 'completed'],
    ]);
  });
});
