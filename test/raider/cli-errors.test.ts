// Exits 2 (usage) and 3 (configuration) from the real command: a message
// on stderr and nothing at all on stdout, even with --stream-json.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanUp, ensureBuilt, makeProject, runRaider } from './helpers.js';

const SCRIPT = 'replies:\n  - steps: [ { message: "ok" } ]\n';

beforeAll(ensureBuilt, 120_000);
afterAll(cleanUp);

describe('usage errors exit 2 with an empty stdout', () => {
  const root = makeProject(SCRIPT);
  const cases: Array<[string, string[], RegExp]> = [
    ['no prompt', ['--stream-json', '-e', 'scripted', '-r', root], /^No prompt given\.$/m],
    ['a blank prompt', ['--stream-json', '-e', 'scripted', '-r', root, '--', '   '], /^No prompt given\.$/m],
    ['two machine flags', ['--json', '--stream-json', '-e', 'scripted', '-r', root, '--', 'x'], /only one machine output format/],
    ['an unknown stream-json version', ['--stream-json=2', '--', 'x'], /^unknown --stream-json version '2' \(known: 1\)$/m],
    [
      'two session flags',
      ['--stream-json', '--no-session', '--session', 'abcd', '--', 'x'],
      /only one of --session, --continue, --no-session/,
    ],
    ['an unknown option', ['--stream-json', '--frobnicate', '--', 'x'], /unknown option --frobnicate/],
    ['a bad permission mode', ['--stream-json', '--permission-mode', 'yolo', '--', 'x'], /unknown --permission-mode/],
    ['an unknown session', ['--stream-json', '-e', 'scripted', '-r', root, '--session', 'beef', '--', 'x'], /^unknown session beef$/m],
    ['--continue without sessions', ['--stream-json', '-e', 'scripted', '-r', root, '--continue', '--', 'x'], /no session to continue/],
  ];
  for (const [what, args, message] of cases) {
    it(what, async () => {
      const r = await runRaider(args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
    });
  }
});

describe('configuration errors exit 3 with an empty stdout', () => {
  it('no engine and no API keys: says how to configure one', async () => {
    const r = await runRaider(['--stream-json', '-r', makeProject(SCRIPT), '--', 'x'], { env: cleanEnv() });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/--engine scripted/);
    expect(r.stderr).toMatch(/ANTHROPIC_API_KEY/);
    expect(r.stderr).toMatch(/OPENAI_API_KEY/);
  });

  it('no engine: the advice names the real files of the root, not a placeholder', async () => {
    const root = makeProject(SCRIPT);
    const r = await runRaider(['--stream-json', '-r', root, '--', 'x'], { env: cleanEnv() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`  engine: in ${join(root, '.raider.yml')},\n`);
    expect(r.stderr).toContain(`plays ${join(root, '.raider', 'script.yml')} or -o script=FILE`);
    expect(r.stderr).not.toContain('<root>');
  });

  it("no engine under a hall: the advice names the hall entry's key and the hall's config file", async () => {
    const root = makeProject(SCRIPT);
    const config = join(root, '.raider-hall.yml');
    const env = cleanEnv({ RAIDER_HALL_ENTRY: 'bjorn', RAIDER_HALL_CONFIG: config });
    const r = await runRaider(['--stream-json', '-r', root, '--', 'x'], { env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("no engine configured for the hall's raider bjorn. Choose one of:\n");
    expect(r.stderr).toContain(`  raiders.bjorn.engine in ${config}: anthropic or openai`);
    expect(r.stderr).not.toContain('<root>');
    expect(r.stderr).not.toContain('--engine scripted');
  });

  it('an unknown engine', async () => {
    const r = await runRaider(['--stream-json', '-e', 'hal9000', '--', 'x']);
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toMatch(/unknown engine 'hal9000' \(known: anthropic, openai, scripted\)/);
  });

  it('a missing script, named by its path', async () => {
    const root = makeProject();
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', root, '--', 'x']);
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toContain(join(root, '.raider', 'script.yml'));
  });

  it('an invalid script, named with the bad step', async () => {
    const root = makeProject('replies:\n  - steps: [ { mesage: "typo" } ]\n');
    const r = await runRaider(['--stream-json', '-o', 'engine=scripted', '-r', root, '--', 'x']);
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toContain(join(root, '.raider', 'script.yml'));
    expect(r.stderr).toMatch(/replies\[0\]\.steps\[0\]/);
  });

  it('a script that is not YAML, from -o script= relative to the root', async () => {
    const root = makeProject(undefined, { 'demo.yml': 'replies: [ {' });
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-o', 'script=demo.yml', '-r', root, '--', 'x']);
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toContain(join(root, 'demo.yml'));
  });

  it('a root that does not exist', async () => {
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', '/nonexistent/raider-root', '--', 'x']);
    expect(r).toMatchObject({ code: 3, stdout: '' });
  });
});

describe('help and version', () => {
  it('--help prints the usage and exits 0', async () => {
    const r = await runRaider(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: raider/);
  });

  it('--version prints the package version', async () => {
    const r = await runRaider(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^raider \d+\.\d+\.\d+/);
  });
});
