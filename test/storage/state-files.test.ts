/** The fast renderers of the state files write exactly what the canonical JSON of the same data is (safe-stable-stringify's, as a reference of its own). */
import stringify from 'safe-stable-stringify';
import { describe, expect, it } from 'vitest';
import { DurableState, noDirt, type LedgerRun } from '../../src/ports/durable-state.js';
import { renderBindingQueues, renderRuns, renderSlotQueue, walLine } from '../../src/adapters/storage/state-files.js';
import type { DurableOp } from '../../src/ports/durable-state.js';

const canonical = (value: unknown): string => stringify(value) ?? 'null';

const odd = 'quote " backslash \\ control \u0001 snowman \u2603 lone surrogate \ud800 newline \n';

function sample(): DurableState {
  const state = new DurableState();
  const dirty = noDirt();
  const mission = (id: string, extra: object = {}) => ({ id, name: '1bjorn', mission: `${odd}${id}`, ...extra });
  // Keys in sorted order, as the hall builds its missions (written by the native JSON writer), and not.
  state.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: { id: 'm-0', mission: odd, name: '1bjorn' } }, dirty);
  state.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission('m-1') }, dirty);
  state.apply(
    { op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: mission('m-2', { telegram: { bot: 'ops', chat_id: 42 }, cwd: 'sub' }) },
    dirty,
  );
  state.apply({ op: 'queue', queue: { kind: 'binding', binding: 'z:b' }, entry: mission('m-3', { binding: 'z:b' }) }, dirty);
  state.apply({ op: 'queue', queue: { kind: 'binding', binding: 'a:b' }, entry: mission('m-4', { binding: 'a:b' }) }, dirty);
  const run: LedgerRun = {
    id: 'bjorn-2',
    slot: 'bjorn',
    base_name: 'bjorn',
    entry: mission('m-5'),
    started_at: 1,
    events_path: '/e',
    log_path: '/l',
  };
  state.apply({ op: 'run', run }, dirty);
  state.apply({ op: 'run', run: { ...run, id: 'bjorn-1', entry: mission('m-6'), binding: 'slot:x', session: 's' } }, dirty);
  state.apply({ op: 'pid', runId: 'bjorn-2', pid: 4242 }, dirty);
  return state;
}

describe('state file renderers', () => {
  it('match the canonical JSON, and stay right after a run gets its pid', () => {
    const state = sample();
    expect(renderSlotQueue(state.slotQueues.get('1bjorn') ?? [])).toBe(`${canonical(state.slotQueues.get('1bjorn'))}\n`);
    expect(renderBindingQueues(state)).toBe(`${canonical(Object.fromEntries(state.bindingQueues))}\n`);
    expect(renderRuns(state)).toBe(`${canonical(Object.fromEntries(state.runs))}\n`);
    state.apply({ op: 'pid', runId: 'bjorn-1', pid: 7 }, noDirt());
    expect(renderRuns(state)).toBe(`${canonical(Object.fromEntries(state.runs))}\n`);
    expect(JSON.parse(renderRuns(state))['bjorn-1'].pid).toBe(7);
  });

  it('write a queued mission into the log as the canonical JSON of the operation', () => {
    const ops: DurableOp[] = [
      { op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: { id: 'm-1', name: '1bjorn', mission: odd } },
      {
        op: 'queue',
        queue: { kind: 'binding', binding: 'telegram:ops:42' },
        entry: { id: 'm-2', name: 'bjorn', mission: 'x', binding: 'telegram:ops:42', telegram: { bot: 'ops', chat_id: 42 }, cwd: 'sub' },
      },
      { op: 'remove', missionId: 'm-1' },
    ];
    for (const op of ops) expect(walLine(op)).toBe(canonical(op));
  });
});
