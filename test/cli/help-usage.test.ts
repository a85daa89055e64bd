/**
 * `--help` everywhere exits 0; unknown options and subcommands, and missing
 * arguments, are usage errors (exit 2) that reach no hall.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type CliResult, hall, hallRoot, removeRoots } from './cli-helpers.js';

// Every command is a whole node process: on a busy machine they take a while.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

/** Runs the calls a few at a time: each is a whole node process. */
async function inBatches(calls: Array<() => Promise<CliResult>>, size = 3): Promise<CliResult[]> {
  const out: CliResult[] = [];
  for (let i = 0; i < calls.length; i += size) out.push(...(await Promise.all(calls.slice(i, i + size).map((c) => c()))));
  return out;
}

/** `raider hall ARGV` in `cwd` for each argv, a few at a time. */
function hallEach(argvs: string[][], cwd: string): Promise<CliResult[]> {
  return inBatches(argvs.map((argv) => () => hall(argv, cwd)));
}

const SUBCOMMANDS = [
  'init',
  'add-raider',
  'start',
  'stop',
  'status',
  'ps',
  'spawn',
  'attach',
  'kill',
  'cancel',
  'logs',
  'session',
  'session reset',
];

describe.concurrent('raider hall --help', () => {
  it('prints the usage and exits 0 for raider hall and each subcommand', async () => {
    // A directory with a config, so that a --help that was ignored would have something to act on.
    const cwd = hallRoot('raiders: { bjorn: {} }\n');
    const argvs = [['--help'], [], ...SUBCOMMANDS.map((c) => [...c.split(' '), '--help'])];
    const results = await hallEach(argvs, cwd);
    results.forEach((r, i) => {
      const what = `raider hall ${argvs[i]!.join(' ')}`;
      expect(r.code, what).toBe(0);
      expect(r.stdout, what).toMatch(/^Usage: raider hall/);
    });
    // The top-level help names every subcommand.
    for (const c of SUBCOMMANDS.filter((c) => !c.includes(' '))) expect(results[0]!.stdout).toContain(c);
    // No --help started or wrote anything.
    const fs = await import('node:fs');
    expect(fs.readdirSync(cwd).sort()).toEqual(['.raider-hall.yml']);
  });
});

describe.concurrent('raider hall help COMMAND', () => {
  it("prints that command's help, as COMMAND --help does, on stdout alone", async () => {
    const cwd = hallRoot();
    const [help, flag, nested, nestedFlag] = await Promise.all([
      hall(['help', 'spawn'], cwd),
      hall(['spawn', '--help'], cwd),
      hall(['session', 'help', 'reset'], cwd),
      hall(['session', 'reset', '--help'], cwd),
    ]);
    expect(flag).toMatchObject({ code: 0, stderr: '' });
    expect(flag.stdout).toMatch(/^Usage: raider hall spawn \[options\][^\n]*\n[\s\S]*display help for command\n$/);
    expect(help).toEqual(flag);
    expect(nestedFlag.stdout).toMatch(/^Usage: raider hall session reset /);
    expect(nested).toEqual(nestedFlag);
  });
});

describe.concurrent('raider hall --version', () => {
  it('prints the version and exits 0; add-raider --help describes each option', async () => {
    const cwd = hallRoot();
    const [version, addRaider] = await Promise.all([hall(['--version'], cwd), hall(['add-raider', '--help'], cwd)]);
    const { RAIDER_VERSION } = await import('../../src/protocol/raider-version.js');
    expect(version).toMatchObject({ code: 0, stdout: `raider hall ${RAIDER_VERSION}\n`, stderr: '' });
    expect(addRaider.code).toBe(0);
    for (const option of ['--engine <engine>', '--model <model>', '--persona <pack>', '--pack <pack>']) {
      // Each option line has a description after the option.
      expect(addRaider.stdout).toMatch(new RegExp(`^  ${option.replace(/[<>]/g, '.')}\\s+\\S`, 'm'));
    }
  });
});

describe.concurrent('usage errors', () => {
  it('unknown options and subcommands exit 2', async () => {
    const cwd = hallRoot('raiders: { bjorn: {} }\n');
    const cases: Array<[string[], RegExp]> = [
      [['frob'], /frob/],
      [['status', '--bogus'], /--bogus/],
      [['spawn', '--bogus', 'bjorn', 'answer'], /--bogus/],
      [['session', 'frob', 'x'], /frob/],
    ];
    const results = await hallEach(
      cases.map(([argv]) => argv),
      cwd,
    );
    results.forEach((r, i) => {
      const [argv, message] = cases[i]!;
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stdout, argv.join(' ')).toBe('');
      expect(r.stderr, argv.join(' ')).toMatch(message);
    });
    const fs = await import('node:fs');
    expect(fs.readdirSync(cwd).sort()).toEqual(['.raider-hall.yml']);
  });

  it('missing arguments print the usage line and exit 2', async () => {
    const cwd = hallRoot('raiders: { bjorn: {} }\n');
    const cases: Array<[string[], string]> = [
      [['spawn'], 'Usage: raider hall spawn NAME MISSION [--attach]\n'],
      [['attach'], 'Usage: raider hall attach ID\n'],
      [['logs', '--follow'], 'Usage: raider hall logs ID [--follow]\n'],
      [['session', 'reset', 'a', 'b'], 'Usage: raider hall session reset [DIR] BINDING\n'],
    ];
    const results = await hallEach(
      cases.map(([argv]) => argv),
      cwd,
    );
    results.forEach((r, i) => {
      const [argv, usage] = cases[i]!;
      expect(r, argv.join(' ')).toMatchObject({ code: 2, stdout: '', stderr: usage });
    });
  });
});
