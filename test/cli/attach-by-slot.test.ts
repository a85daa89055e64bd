/**
 * `attach NAME` with a slot's or raider's name where a run id was meant: it
 * follows that slot's one running run, names the runs when there are several
 * (code `ambiguous_run`), and is "raider not found" when nothing by that name runs.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { hall, hallForFile, hallLive, removeRoots, request, socketOf, startedRun } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const file = hallForFile('raiders:\n  ulf: {}\n  erik: {}\n  sven: {}\n  knut: {}\ncancel_grace: 0.3\n');

describe.concurrent('attach by a slot name', () => {
  it.each([
    ["the slot's one running run, and says which", 'ulf', 'ulf'],
    ["a numbered slot's run by its raider's name", '1knut', 'knut'],
  ])('follows %s', async (_, slot, name) => {
    const id = await startedRun(file.root, slot);
    const live = hallLive(['attach', name], file.root);
    await live.printed('· run started (fake)\n');
    expect(await request(socketOf(file.root), { cmd: 'cancel', id })).toEqual({ cancelled: 1, id });
    const r = await live.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toBe(`Attaching to run ${id}, the one running in slot ${slot}.\nrun ${id} ended: cancelled\n`);
  });

  it('names the runs when the slot has several, exit 1, code ambiguous_run', async () => {
    const ids = (await Promise.all([startedRun(file.root, 'erik'), startedRun(file.root, 'erik')])).sort();
    try {
      const r = await hall(['attach', 'erik'], file.root);
      expect(r).toMatchObject({ code: 1, stdout: '', stderr: `Hall: erik names 2 running runs; attach one of them: ${ids.join(', ')}\n` });
      const json = await hall(['attach', '--json', 'erik'], file.root);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toEqual({
        code: 'ambiguous_run',
        error: `Hall: erik names 2 running runs; attach one of them: ${ids.join(', ')}`,
      });
    } finally {
      for (const id of ids) await request(socketOf(file.root), { cmd: 'kill', id });
    }
  });

  it('is raider not found for a slot with no running run', async () => {
    expect(await hall(['attach', 'sven'], file.root)).toMatchObject({ code: 1, stdout: '', stderr: 'Hall: raider not found\n' });
  });
});
