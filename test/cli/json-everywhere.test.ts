/**
 * `--json` on every client command where a reply can be printed (kill,
 * cancel, logs, stop beside status, ps, spawn, ...), and one convention for
 * errors under `--json`: a JSON object `{"error", "code"?}` on stdout, stderr
 * empty, the exit code the same as without `--json` (README, "Using it").
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { doneOf, hall, hallForFile, hallLive, hallRoot, raiderStarted, removeRoots, request, socketOf } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const step = it.sequential;

describe('--json of kill, cancel and logs, and of errors', () => {
  const file = hallForFile('raiders:\n  bjorn: {}\ncancel_grace: 0.3\n');

  step('kill --json and cancel --json print the hall reply', async () => {
    const spawn = () => request(socketOf(file.root), { cmd: 'spawn', name: 'bjorn', mission: 'wait 600' });
    const [k, c] = await Promise.all([spawn(), spawn()]);
    await Promise.all([raiderStarted(file.root, k.id), raiderStarted(file.root, c.id)]);
    const [killed, cancelled] = await Promise.all([hall(['kill', '--json', k.id], file.root), hall(['cancel', c.id, '--json'], file.root)]);
    expect(killed).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(killed.stdout)).toEqual({ killed: 1, id: k.id });
    expect(cancelled).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(cancelled.stdout)).toEqual({ cancelled: 1, id: c.id });
    await Promise.all([doneOf(file.tap, k.id), doneOf(file.tap, c.id)]);
  });

  step('logs --json prints {id, log}; with --follow, one {id, line} object per line', async () => {
    const run = await request(socketOf(file.root), { cmd: 'spawn', name: 'bjorn', mission: 'wait 600' });
    await raiderStarted(file.root, run.id);
    const started = `[hall] raider ${run.id} started`;
    const follow = hallLive(['logs', '--follow', '--json', run.id], file.root);
    await follow.printed(`${JSON.stringify({ id: run.id, line: started })}\n`);
    expect(await request(socketOf(file.root), { cmd: 'cancel', id: run.id })).toEqual({ cancelled: 1, id: run.id });
    const result = `[hall] raider ${run.id} cancelled: cancelled on request`;
    const followed = await follow.done;
    expect(followed).toMatchObject({ code: 0, stderr: '' });
    expect(
      followed.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { id: run.id, line: started },
      { id: run.id, line: result },
    ]);
    await doneOf(file.tap, run.id);
    const [logs, ended] = await Promise.all([
      hall(['logs', '--json', run.id], file.root),
      hall(['logs', '--follow', '--json', run.id], file.root),
    ]);
    expect(logs).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(logs.stdout)).toEqual({ id: run.id, log: `${started}\n${result}\n` });
    expect(ended).toMatchObject({ code: 0, stdout: followed.stdout, stderr: '' });
  });

  step("errors under --json: one object on stdout with the hall's words and code, the same exit code", async () => {
    const [kill, cancel, logs, plain] = await Promise.all([
      hall(['kill', '--json', 'bjorn-1'], file.root),
      hall(['cancel', '--json', 'nope-1'], file.root),
      hall(['logs', '--json', 'bjorn-1'], file.root),
      hall(['kill', 'bjorn-1'], file.root),
    ]);
    for (const r of [kill, cancel, logs]) {
      expect(r).toMatchObject({ code: 1, stderr: '' });
      // The hall's code comes along: what a script decides on, not the words.
      expect(JSON.parse(r.stdout)).toEqual({ error: 'Hall: raider not found', code: 'run_not_found' });
    }
    // Without --json: the same words on stderr.
    expect(plain).toMatchObject({ code: 1, stdout: '', stderr: 'Hall: raider not found\n' });

    // A usage error keeps exit 2 and says so in its code.
    const usage = await hall(['logs', '--json'], file.root);
    expect(usage).toMatchObject({ code: 2, stderr: '' });
    expect(JSON.parse(usage.stdout)).toEqual({ error: 'Usage: raider hall logs ID [--follow]', code: 'usage' });
  });

  step('session list --json names the unit of last use: last_used_at, ISO, beside epoch-ms last_used', async () => {
    const run = await request(socketOf(file.root), { cmd: 'spawn', name: '1bjorn', mission: 'answer one' });
    await doneOf(file.tap, run.id);
    const listed = await hall(['session', 'list', '--json'], file.root);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const [session] = JSON.parse(listed.stdout).sessions;
    expect(session.binding).toBe('slot:1bjorn');
    expect(typeof session.last_used).toBe('number');
    expect(session.last_used_at).toBe(new Date(session.last_used).toISOString());
  });
});

describe('a refused spawn under --json', () => {
  const file = hallForFile('raiders:\n  ivar: { provider: "http://127.0.0.1:9/v1" }\n');

  it("carries the hall's reason as its code; the words are those of the plain error", async () => {
    const [json, plain] = await Promise.all([
      hall(['spawn', '--json', 'ivar', 'hello'], file.root),
      hall(['spawn', 'ivar', 'hello'], file.root),
    ]);
    expect(plain).toMatchObject({ code: 1, stdout: '' });
    expect(plain.stderr).toMatch(/^Hall error: raider ivar: provider .* is a host or URL/);
    expect(json).toMatchObject({ code: 1, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual({ error: plain.stderr.trimEnd(), code: 'provider_not_alias' });
  });
});

describe('errors under --json without a hall', () => {
  it('every client command with --json says no hall runs as a JSON object with code hall_not_running, exit 1', async () => {
    const root = hallRoot('raiders: { bjorn: {} }\n');
    const commands = [
      ['status', '--json'],
      ['ps', '--json'],
      ['kill', '--json', 'bjorn-1'],
      ['cancel', '--json', 'bjorn-1'],
      ['queue', '--json'],
      ['session', 'list', '--json'],
      ['answer', '--json', 'bjorn-1', 'q1', 'once'],
      ['attach', '--json', 'bjorn-1'],
      ['inspect', '--once', '--json'],
      ['spawn', '--json', 'bjorn', 'hello'],
    ];
    const results = await Promise.all(commands.map((args) => hall(args, root)));
    for (const [i, r] of results.entries()) {
      expect({ args: commands[i], ...r }).toMatchObject({ code: 1, stderr: '' });
      expect(JSON.parse(r.stdout)).toEqual({ error: 'Hall not running (no socket found)', code: 'hall_not_running' });
    }
    const dashboard = await hall(['dashboard', '--json'], root);
    expect(dashboard).toMatchObject({ code: 1, stderr: '' });
    expect(JSON.parse(dashboard.stdout)).toEqual({
      error: `Hall not running (no socket found): start the hall first (raider hall start ${root})`,
      code: 'hall_not_running',
    });
  });
});
