/**
 * `raider WORD`: a first word that is neither a command nor a mission is a
 * usage error (exit 2) that starts no agent run; a mission is the words after
 * `--`, one argument with whitespace in it, or stdin (issue 14, item 1).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { hallRoot, removeRoots, runCli } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000 });
afterAll(removeRoots);

/** A directory where the scripted engine answers every mission with the mission itself. */
function project(): string {
  const root = hallRoot();
  fs.mkdirSync(path.join(root, '.raider'));
  fs.writeFileSync(path.join(root, '.raider', 'script.yml'), 'replies:\n  - steps: [ { message: "mission: {{mission}}" } ]\n');
  return root;
}

/** The engine the raider would pick from the environment: one that would really run. */
const SCRIPTED = { RAIDER_SCRIPT: undefined, OPENAI_API_KEY: undefined, ANTHROPIC_API_KEY: undefined };

describe.concurrent('raider with a word that is not a command', () => {
  it.each([
    [['hal', 'stop'], /^unknown command 'hal' \(did you mean hall\?\)$/m],
    [['acpp'], /^unknown command 'acpp' \(did you mean acp\?\)$/m],
    [['fix'], /^unknown command 'fix'$/m],
    [['fix', 'the', 'bug'], /^unknown command 'fix'$/m],
    [['-e', 'scripted', 'provider', 'is', 'down'], /^'provider' is a command: it comes first/m],
  ])('raider %j is a usage error that runs nothing', async (argv, message) => {
    const cwd = project();
    const before = fs.readdirSync(path.join(cwd, '.raider')).sort();
    const r = await runCli(['-e', 'scripted', ...argv], { cwd, env: SCRIPTED });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('A mission goes after --');
    // No run: no session was written.
    expect(fs.readdirSync(path.join(cwd, '.raider')).sort()).toEqual(before);
  });
});

describe.concurrent('what is a mission', () => {
  it('the words after --, one quoted argument, or stdin', async () => {
    const cwd = project();
    const run = (argv: string[], input?: string) =>
      runCli(['-e', 'scripted', '--no-session', ...argv], { cwd, env: SCRIPTED, ...(input !== undefined ? { input } : {}) });
    expect(await run(['--', 'fix'])).toMatchObject({ code: 0, stdout: 'mission: fix\n' });
    expect(await run(['--', 'hal', 'stop'])).toMatchObject({ code: 0, stdout: 'mission: hal stop\n' });
    expect(await run(['fix the bug'])).toMatchObject({ code: 0, stdout: 'mission: fix the bug\n' });
    expect(await run([], 'from stdin\n')).toMatchObject({ code: 0, stdout: 'mission: from stdin\n' });
  });
});

describe.concurrent('help', () => {
  it('raider help and raider --help list the commands', async () => {
    const cwd = hallRoot();
    for (const argv of [['help'], ['--help']]) {
      const r = await runCli(argv, { cwd });
      expect(r.code, argv.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: raider/);
      for (const command of ['hall', 'acp', 'provider', 'demo']) expect(r.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it('raider provider alone prints its usage and exits 2; --help exits 0', async () => {
    const cwd = hallRoot();
    const alone = await runCli(['provider'], { cwd });
    expect(alone).toMatchObject({ code: 2, stdout: '' });
    expect(alone.stderr).toContain('raider provider add ALIAS URL');
    const help = await runCli(['provider', '--help'], { cwd });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('raider provider add ALIAS URL');
    expect(fs.readdirSync(cwd)).toEqual([]);
  });
});
