/**
 * `logs NAME` with a slot's or raider's name where a run id was meant reads
 * that name's one running run, as `attach NAME` does (the same resolver,
 * src/cli/hall/run-by-name.ts): its lines, also with --json and --follow;
 * several running runs are an error naming them (code `ambiguous_run`);
 * a name with no running run is "raider not found", as before.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { doneOf, hall, hallForFile, hallLive, removeRoots, request, socketOf, startedRun } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const file = hallForFile('raiders:\n  ulf: {}\n  erik: {}\n  sven: {}\n  knut: {}\ncancel_grace: 0.3\n');

describe.concurrent('logs by a slot name', () => {
  it("prints the slot's one running run's lines, as logs ID does, and says which run on stderr", async () => {
    const id = await startedRun(file.root, 'ulf');
    try {
      const byId = await hall(['logs', id], file.root);
      expect(byId).toMatchObject({ code: 0, stderr: '' });
      expect(byId.stdout).toContain(`[hall] raider ${id} started\n`);
      const byName = await hall(['logs', 'ulf'], file.root);
      expect(byName).toEqual({ ...byId, stderr: `Logs of run ${id}, the one running in slot ulf.\n` });
      const json = await hall(['logs', '--json', 'ulf'], file.root);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({ id, log: byId.stdout });
    } finally {
      await request(socketOf(file.root), { cmd: 'kill', id });
    }
  });

  it("follows a numbered slot's run by its raider's name until its result line", async () => {
    const go = path.join(file.root, 'go-knut');
    const id = await startedRun(file.root, '1knut', `chatter ${go} alpha`);
    const live = hallLive(['logs', '--follow', 'knut'], file.root);
    await live.printed(`[${id}] alpha before\n`);
    fs.writeFileSync(go, '');
    const r = await live.done;
    expect(await doneOf(file.tap, id)).toMatchObject({ status: 'completed' });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`Logs of run ${id}, the one running in slot 1knut.\n`);
    expect(r.stdout).toBe(
      [`[hall] raider ${id} started`, `[${id}] alpha before`, `[${id}] alpha after`, `[hall] raider ${id} completed: alpha done`, ''].join(
        '\n',
      ),
    );
  });

  it('names the runs when the slot has several, exit 1, code ambiguous_run', async () => {
    const ids = (await Promise.all([startedRun(file.root, 'erik'), startedRun(file.root, 'erik')])).sort();
    const error = `Hall: erik names 2 running runs; ask for the logs of one of them: ${ids.join(', ')}`;
    try {
      expect(await hall(['logs', 'erik'], file.root)).toMatchObject({ code: 1, stdout: '', stderr: `${error}\n` });
      expect(await hall(['logs', '--follow', 'erik'], file.root)).toMatchObject({ code: 1, stdout: '', stderr: `${error}\n` });
      const json = await hall(['logs', '--json', 'erik'], file.root);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toEqual({ code: 'ambiguous_run', error });
    } finally {
      for (const id of ids) await request(socketOf(file.root), { cmd: 'kill', id });
    }
  });

  it('is raider not found for a slot with no running run, as before', async () => {
    expect(await hall(['logs', 'sven'], file.root)).toMatchObject({ code: 1, stdout: '', stderr: 'Hall: raider not found\n' });
    const json = await hall(['logs', '--json', 'sven'], file.root);
    expect(JSON.parse(json.stdout)).toEqual({ code: 'run_not_found', error: 'Hall: raider not found' });
  });
});
