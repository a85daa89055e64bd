/**
 * The last step before a raider starts (src/actors/record-written.ts): its
 * run's record must be written first. Against a stand-in for the state
 * store's four questions, with a real slot log: the run starts at once when
 * the record is written, waits until it is, fails with one result line in
 * the slot log when the record is refused or the run is stopped first, and a
 * stop after the record was written is none of its business
 * (docs/storage.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { recordWritten } from '../../src/actors/record-written.js';
import { tempRoot } from '../support/temp-roots.js';

/**
 * A store whose record is written when the test says; `commit` resolves when
 * `write` is called. It holds the record of run `bjorn-1000` unless `held` says not.
 */
function testStore(written: boolean, refusal: string | null = null, held = true) {
  let wrote: () => void = () => {};
  const committed = new Promise<void>((resolve) => {
    wrote = resolve;
  });
  const store = {
    isWritten: written,
    state: { runs: new Set(held ? ['bjorn-1000'] : []) },
    written: () => store.isWritten,
    commit: () => committed,
    lastError: vi.fn(() => 'the disk is full'),
    refusal: () => refusal,
    write() {
      store.isWritten = true;
      wrote();
    },
  };
  return store;
}

function slotLog(): { run: { runId: string; logPath: string }; lines: () => string[] } {
  const logPath = path.join(tempRoot('record-written-'), 'bjorn.log');
  fs.writeFileSync(logPath, '');
  return { run: { runId: 'bjorn-1000', logPath }, lines: () => fs.readFileSync(logPath, 'utf8').split('\n').filter(Boolean) };
}

describe("a run's record before its raider starts", () => {
  it('lets the raider start at once when the record is written', () => {
    const { run, lines } = slotLog();
    expect(recordWritten(testStore(true))(run)).toBeNull();
    expect(lines()).toEqual([]);
  });

  it('waits until the record is written, and then a stop of the run does not ask the store why', async () => {
    const { run, lines } = slotLog();
    const store = testStore(false);
    const waiting = recordWritten(store)(run);
    expect(waiting).not.toBeNull();
    store.write();
    await expect(waiting?.done).resolves.toBeUndefined();
    waiting?.stop();
    expect(store.lastError).not.toHaveBeenCalled();
    expect(lines()).toEqual([]);
  });

  it('waits for its own record, however written everything the store holds is', async () => {
    const { run, lines } = slotLog();
    const store = testStore(true, null, false);
    const waiting = recordWritten(store)(run);
    expect(waiting).not.toBeNull();
    // The hall applies the record: the next look finds it (the commit is the first look).
    store.state.runs.add(run.runId);
    store.write();
    await expect(waiting?.done).resolves.toBeUndefined();
    expect(lines()).toEqual([]);
  });

  it('fails with one result line in the slot log when a shared cluster refused the record', async () => {
    const { run, lines } = slotLog();
    const refused = 'the mission went to hall b';
    await expect(recordWritten(testStore(true, refused))(run)?.done).rejects.toThrow(refused);
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toContain(`could not be started: ${refused}`);
  });

  it('fails with the store’s reason, once in the slot log, when the run is stopped before its record is written', async () => {
    const { run, lines } = slotLog();
    const waiting = recordWritten(testStore(false))(run);
    waiting?.stop();
    await expect(waiting?.done).rejects.toThrow('the disk is full');
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toContain('could not be started: the disk is full');
  });
});
