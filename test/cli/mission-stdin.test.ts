/**
 * `raider hall spawn NAME` reads its mission from stdin when no mission words
 * follow and stdin is not a terminal, and for a lone `-`: the one way to hand
 * over a mission longer than the shell lets one argument be. The hall's
 * 100,000-byte limit holds for it as for an argument.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { doneOf, hall, hallForFile, hallOnTerminal, removeRoots, request, socketOf, spawned } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const file = hallForFile('raiders:\n  bjorn: {}\n');

describe.concurrent('a mission on stdin', () => {
  it('with no mission words, stdin is the mission, less its final line break', async () => {
    const r = await hall(['spawn', 'bjorn'], file.root, { input: 'answer piped in\n' });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const run = spawned(r.stdout);
    expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: 'piped in' });
  });

  it('a lone - reads stdin: 99,000 bytes, more than a shell would pass well, reach the raider whole', async () => {
    const text = `line one\n${'y'.repeat(99_000 - 'answer line one\n'.length)}`;
    expect(Buffer.byteLength(`answer ${text}`)).toBe(99_000);
    const r = await hall(['spawn', 'bjorn', '-'], file.root, { input: `answer ${text}` });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const run = spawned(r.stdout);
    expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: text });
  });

  it('a mission over 100,000 bytes is refused with the words the hall uses for an argument, and nothing waits', async () => {
    const r = await hall(['spawn', 'bjorn'], file.root, { input: 'z'.repeat(150_000) });
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toContain(
      'the mission is 150000 bytes; the hall accepts at most 100000 (a raider gets it as one command-line argument)',
    );
    const status = await request(socketOf(file.root), { cmd: 'status' });
    expect(status.waiting).toBeUndefined();
  });

  it('an empty or blank stdin is refused as an empty argument is', async () => {
    const [empty, blank, dash] = await Promise.all([
      hall(['spawn', 'bjorn'], file.root, { input: '' }),
      hall(['spawn', 'bjorn'], file.root, { input: ' \n\t\n' }),
      hall(['spawn', 'bjorn', '-'], file.root, { input: '\n' }),
    ]);
    for (const r of [empty, blank, dash]) {
      expect(r).toMatchObject({ code: 1, stdout: '', stderr: 'Hall error: spawn requires a mission: it is empty\n' });
    }
  });

  it('with a terminal as stdin and no mission words, it is a usage error', async () => {
    const r = await hallOnTerminal(['spawn', 'bjorn'], file.root);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('Usage: raider hall spawn NAME MISSION [--attach]\r\n');
  });
});
