/**
 * A warm ACP bridge (`raider acp-client --spare`, docs/agents.md "Warm
 * bridges") by itself: handed a run on its stdin, it runs it as a bridge
 * started for the run would (the run's arguments, environment and working
 * directory; its events into the run's events file, its stderr and the
 * agent's into the run's stderr file); with no run, it ends at its stdin's
 * end or after its idle time, starting no agent.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RAIDER_BIN, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { removeRoots, tempRoot } from './cli-helpers.js';

vi.setConfig({ testTimeout: 60_000 });

afterAll(() => removeRoots());

function startSpare(root: string, extra: readonly string[] = []) {
  const child = spawn(process.execPath, [RAIDER_BIN, 'acp-client', '--spare', ...extra], {
    cwd: root,
    env: { ...process.env, RAIDER_HALL_RUN_ID: 'spare-t1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, ended, out: () => stdout, err: () => stderr };
}

function events(file: string): Array<Record<string, unknown>> {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe.concurrent('raider acp-client --spare', () => {
  it('runs the run handed to it with the run’s arguments, environment, directory and files', async () => {
    const root = tempRoot('acp-spare-');
    const work = path.join(root, 'work');
    fs.mkdirSync(work);
    const eventsPath = path.join(root, 'run.events');
    const stderrPath = path.join(root, 'run.stderr');
    const spare = startSpare(root);
    const handOver = {
      version: 1,
      run_id: 'r-1',
      argv: ['--stream-json', '--agent-command', SCRIPTED_ACP_AGENT, '--root', work, '--', 'answer', 'ignored'],
      // Only the run's environment reaches the agent: not the spare's own (RAIDER_HALL_RUN_ID aside, as always).
      env: { PATH: process.env.PATH ?? '', SCRIPTED_ACP_ENV_OUT: 'RUN_ONLY', RUN_ONLY: 'from the hand-over' },
      cwd: work,
      events_path: eventsPath,
      stderr_path: stderrPath,
    };
    spare.child.stdin.end(`${JSON.stringify(handOver)}\n`);
    expect(await spare.ended).toEqual({ code: 0, signal: null });
    const evs = events(eventsPath);
    expect(evs[0]).toMatchObject({ type: 'run.started', engine: 'acp', agent: SCRIPTED_ACP_AGENT });
    const finished = evs.at(-1);
    expect(finished).toMatchObject({ type: 'run.finished', status: 'completed', response: 'RUN_ONLY=from the hand-over' });
    // The agent's stderr went to the run's file; nothing to the spare's own stdout or stderr.
    expect(fs.readFileSync(stderrPath, 'utf8')).toContain(`scripted agent: session in ${work}`);
    expect(spare.out()).toBe('');
    expect(spare.err()).toBe('');
  });

  it('takes its run from a file on its stdin too (a bridge started by hand)', async () => {
    const root = tempRoot('acp-spare-');
    const eventsPath = path.join(root, 'run.events');
    const handOverPath = path.join(root, 'hand-over.json');
    const handOver = {
      version: 1,
      run_id: 'r-2',
      argv: ['--stream-json', '--agent-command', SCRIPTED_ACP_AGENT, '--', 'answer', 'from a file'],
      env: { PATH: process.env.PATH ?? '' },
      cwd: root,
      events_path: eventsPath,
      stderr_path: path.join(root, 'run.stderr'),
    };
    fs.writeFileSync(handOverPath, `${JSON.stringify(handOver)}\n`);
    const input = fs.openSync(handOverPath, 'r');
    const child = spawn(process.execPath, [RAIDER_BIN, 'acp-client', '--spare'], { cwd: root, stdio: [input, 'ignore', 'pipe'] });
    fs.closeSync(input);
    const errors = child.stderr;
    if (errors === null) throw new Error('the bridge has no stderr pipe');
    let stderr = '';
    errors.on('data', (d: Buffer) => (stderr += d.toString()));
    const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    expect({ ...ended, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(events(eventsPath).at(-1)).toMatchObject({ type: 'run.finished', status: 'completed', response: 'from a file' });
  });

  it('ends at once, 0, when its stdin ends without a run', async () => {
    const root = tempRoot('acp-spare-');
    const spare = startSpare(root);
    spare.child.stdin.end();
    expect(await spare.ended).toEqual({ code: 0, signal: null });
    expect(spare.err()).toContain('a warm bridge ends unused: stdin ended without a hand-over');
  });

  it('ends by itself, 0, after --warm-idle with no run', async () => {
    const root = tempRoot('acp-spare-');
    const spare = startSpare(root, ['--warm-idle', '0.3']);
    expect(await spare.ended).toEqual({ code: 0, signal: null });
    expect(spare.err()).toContain('a warm bridge ends unused: no run within 0.3 s');
  });

  it('refuses a line that is no hand-over, and a bad --warm-idle', async () => {
    const root = tempRoot('acp-spare-');
    const bad = startSpare(root);
    bad.child.stdin.end('{"version":1}\n');
    expect(await bad.ended).toEqual({ code: 0, signal: null });
    expect(bad.err()).toContain('a warm bridge ends unused: the hand-over is not one');
    const idle = startSpare(root, ['--warm-idle', 'soon']);
    expect(await idle.ended).toEqual({ code: 2, signal: null });
    expect(idle.err()).toContain('--warm-idle wants a number of seconds > 0, not "soon"');
  });
});
