/**
 * The optional DIR argument: DIR-only commands take any directory and refuse
 * a non-directory; commands with more arguments take their first positional
 * as DIR when it has a `/` and more words follow, or when it is a directory
 * and more words follow than they need; an explicit DIR without a hall is an
 * error naming it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventTap } from '../support/test-hall.js';
import { doneOf, doneTap, hall, type HallProcess, hallRoot, idle, removeRoots, spawned, startHallProcess } from './cli-helpers.js';

// Every command is a whole node process: on a busy machine they take a while.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

describe('the DIR argument', () => {
  let root = '';
  let elsewhere = '';
  let h: HallProcess | undefined;
  let tap: EventTap | undefined;

  beforeAll(async () => {
    root = hallRoot('raiders:\n  bjorn: {}\n');
    elsewhere = hallRoot(undefined, 'not-a-hall-');
    // An ordinary directory, and a directory that looks like a (stopped) hall, inside the hall root.
    fs.mkdirSync(path.join(root, 'plain'));
    fs.mkdirSync(path.join(root, 'sub'));
    fs.writeFileSync(path.join(root, 'sub', '.raider-hall.yml'), 'raiders: {}\n');
    h = await startHallProcess(root);
    tap = await doneTap(root);
  });
  afterAll(async () => {
    tap?.close();
    expect((await h?.stop())?.code).toBe(0);
  });

  it('status DIR and ps DIR work from another directory, also with a relative DIR', async () => {
    const [status, ps, relative] = await Promise.all([
      hall(['status', root], elsewhere),
      hall(['ps', root], elsewhere),
      hall(['status', path.basename(root), '--json'], path.dirname(root)),
    ]);
    // The person view starts with the root and the running count; more sections (cron, ACP, ...) may follow.
    expect(status).toMatchObject({ code: 0, stderr: '' });
    expect(status.stdout.startsWith(`Hall ${root}\n0 running\n`)).toBe(true);
    expect(ps).toMatchObject({ code: 0, stdout: 'No running raiders.\n', stderr: '' });
    expect(relative.code).toBe(0);
    expect(JSON.parse(relative.stdout)).toMatchObject({ running: 0, root, slots: [] });
  });

  it('without DIR, a command in a subdirectory finds the hall above it and says so on stderr', async () => {
    const deeper = path.join(root, 'plain', 'deeper');
    fs.mkdirSync(deeper, { recursive: true });
    const [status, spawn, here] = await Promise.all([
      hall(['status', '--json'], deeper),
      hall(['spawn', 'bjorn', 'answer', 'from below'], deeper),
      hall(['ps'], root),
    ]);
    expect(status).toMatchObject({ code: 0, stderr: `Using the hall in ${root}\n` });
    expect(JSON.parse(status.stdout)).toMatchObject({ root });
    expect(spawn).toMatchObject({ code: 0, stderr: `Using the hall in ${root}\n` });
    const run = spawned(spawn.stdout);
    expect(run.slot).toBe('bjorn');
    expect(await doneOf(tap!, run.id)).toMatchObject({ status: 'completed', response: 'from below' });
    // In the root itself nothing is said.
    expect(here).toMatchObject({ code: 0, stderr: '' });
  });

  it('a DIR that is not a directory is refused before anything is sent', async () => {
    const file = path.join(elsewhere, 'a-file');
    fs.writeFileSync(file, 'x');
    const results = await Promise.all([hall(['status', '/no/such/dir'], root), hall(['stop', file], root)]);
    expect(results[0]).toMatchObject({ stdout: '', stderr: 'Not a directory: /no/such/dir\n' });
    expect(results[1]).toMatchObject({ stdout: '', stderr: `Not a directory: ${file}\n` });
    for (const r of results) expect(r.code).not.toBe(0);
    // stop did not reach the hall.
    expect(h!.child.exitCode).toBeNull();
  });

  it('spawn DIR NAME MISSION, logs DIR ID and attach DIR ID talk to the hall of DIR', async () => {
    const s = await hall(['spawn', root, 'bjorn', 'answer', 'from', 'afar'], elsewhere);
    expect(s.code).toBe(0);
    const run = spawned(s.stdout);
    expect(run.slot).toBe('bjorn');
    expect(await doneOf(tap!, run.id)).toMatchObject({ status: 'completed', response: 'from afar' });
    const [logs, attach] = await Promise.all([hall(['logs', root, run.id], elsewhere), hall(['attach', root, run.id], elsewhere)]);
    expect(logs).toMatchObject({ code: 0, stdout: `[hall] raider ${run.id} started\n[hall] raider ${run.id} completed: from afar\n` });
    // The run has ended: attach replays it from the files of DIR and says how it ended.
    expect(attach).toMatchObject({
      code: 0,
      stdout: '· run started (fake)\nfrom afar\n■ completed\n',
      stderr: `run ${run.id} ended: completed\n`,
    });
  });

  it('a path or a directory in front of more arguments is DIR: with no hall there, every command says so by name', async () => {
    const missing = path.join(elsewhere, 'nohall');
    const noHall = (word: string) => `No hall in ${word}: it has neither .raider-hall.yml nor a hall socket\n`;
    const cases: Array<[string[], string]> = [
      [['spawn', missing, 'bjorn', 'answer', 'hi'], `No hall in ${missing}: it is not a directory\n`],
      [['spawn', elsewhere, 'bjorn', 'answer', 'hi'], noHall(elsewhere)],
      [['spawn', './plain', 'bjorn', 'answer'], noHall('./plain')],
      // An existing directory, though without a `/`, when more than NAME MISSION follow.
      [['spawn', 'plain', 'bjorn', 'answer', 'hi'], noHall('plain')],
      [['attach', elsewhere, 'bjorn-1'], noHall(elsewhere)],
      [['logs', elsewhere, 'bjorn-1'], noHall(elsewhere)],
      [['kill', elsewhere, 'bjorn-1'], noHall(elsewhere)],
      [['cancel', elsewhere, 'bjorn-1'], noHall(elsewhere)],
      [['answer', elsewhere, 'bjorn-1', 'q1', 'once'], noHall(elsewhere)],
      [['session', 'reset', elsewhere, 'slot:1bjorn'], noHall(elsewhere)],
      [['queue', elsewhere], noHall(elsewhere)],
      [['queue', missing], `No hall in ${missing}: it is not a directory\n`],
      [['queue', elsewhere, '1bjorn'], noHall(elsewhere)],
    ];
    const results = await Promise.all(cases.map(([argv]) => hall(argv, root)));
    results.forEach((r, i) => {
      const [argv, stderr] = cases[i]!;
      expect(r, argv.join(' ')).toMatchObject({ code: 1, stdout: '', stderr });
    });
    // Nothing reached the hall of the working directory.
    expect(h!.child.exitCode).toBeNull();
    const status = await hall(['status', '--json'], root);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: 0 });
  });

  it('a hall-looking directory is the NAME when only NAME and MISSION are given, and DIR when more follow', async () => {
    const [asName, asDir] = await Promise.all([
      hall(['spawn', 'sub', 'answer'], root),
      hall(['spawn', 'sub', 'bjorn', 'answer', 'x'], root),
    ]);
    expect(asName.code).toBe(0);
    const run = spawned(asName.stdout);
    expect(run.slot).toBe('sub');
    await doneOf(tap!, run.id);
    // sub is taken as DIR: its hall is not running.
    expect(asDir).toMatchObject({ code: 1, stdout: '', stderr: 'Hall not running (no socket found)\n' });
    await idle(root);
  });
});
