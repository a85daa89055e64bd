/**
 * `raider hall init`, `raider hall add-raider` and configuration errors at
 * `start`, through the real `bin/raider`.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadHallConfig } from '../../src/adapters/config/load-hall-config.js';
import { doneOf, doneTap, hall, hallRoot, pidFileOf, removeRoots, socketOf, spawned, startHallProcess } from './cli-helpers.js';

// Every command is a whole node process: on a busy machine they take a while.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const PROMPT = 'Raider name (e.g. Bjorn, Ragnar, Astrid, Ivar, Lagertha): ';
const initialised = (root: string, name: string) => `Hall initialised in ${root} with raider '${name}'.\nStart with: raider hall start\n`;
/** What init says when it picked the scripted engine and wrote the sample script. */
const initialisedOffline = (root: string, name: string) =>
  `Hall initialised in ${root} with raider '${name}'.\n` +
  `It runs offline with the scripted engine, playing the sample script .raider/script.yml it just wrote; for a model, ` +
  `set raiders.${name}.engine in .raider-hall.yml to openai or anthropic (or init with --engine).\n` +
  'Start with: raider hall start\n';
const OFFLINE = { engine: 'scripted', persona: 'caveman', packs: [] };

function configOf(root: string): string {
  return path.join(root, '.raider-hall.yml');
}

function yamlOf(root: string): Record<string, unknown> {
  return YAML.parse(fs.readFileSync(configOf(root), 'utf8'));
}

describe.concurrent('raider hall init', () => {
  it('writes a config with one raider that a hall loads and runs', async () => {
    const root = hallRoot();
    const r = await hall(['init', '--name', 'bjorn', '--engine', 'anthropic', '--persona', 'polite'], root);
    expect(r).toMatchObject({ code: 0, stdout: initialised(root, 'bjorn'), stderr: '' });
    expect(yamlOf(root)).toEqual({ raiders: { bjorn: { engine: 'anthropic', persona: 'polite', packs: [] } } });
    const loaded = loadHallConfig(root);
    expect(loaded.ok).toBe(true);

    // A real hall started on it passes the engine and the persona to the raider.
    const h = await startHallProcess(root);
    try {
      const tap = await doneTap(root);
      const s = await hall(['spawn', 'bjorn', 'argv'], root);
      expect(s.code).toBe(0);
      const done = await doneOf(tap, spawned(s.stdout).id);
      tap.close();
      const argv = (JSON.parse(done.response as string) as { argv: string[] }).argv;
      expect(argv.slice(0, 5)).toEqual(['--stream-json', '--engine', 'anthropic', '--pack', 'polite']);
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('refuses to overwrite an existing config', async () => {
    const root = hallRoot('# mine\nraiders: { ragnar: {} }\n');
    const r = await hall(['init', '--name', 'bjorn'], root);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`Refusing to overwrite existing ${configOf(root)}\n`);
    expect(fs.readFileSync(configOf(root), 'utf8')).toBe('# mine\nraiders: { ragnar: {} }\n');
  });

  it('takes the name from stdin without --name, with no prompt when stdin is not a terminal', async () => {
    const root = hallRoot();
    const r = await hall(['init'], root, { input: 'astrid\n' });
    expect(r).toMatchObject({ code: 0, stdout: initialisedOffline(root, 'astrid') });
    expect(r.stdout).not.toContain(PROMPT);
    expect(yamlOf(root).raiders).toEqual({ astrid: OFFLINE });
  });

  it('is a usage error (exit 2, no prompt) when stdin is not a terminal and gives no name', async () => {
    for (const input of ['\n', '']) {
      const root = hallRoot();
      const r = await hall(['init'], root, { input });
      expect(r).toMatchObject({
        code: 2,
        stdout: '',
        stderr: 'No raider name given.\nUsage: raider hall init --name NAME [--engine E] [--persona P]\n',
      });
      expect(fs.existsSync(configOf(root))).toBe(false);
    }
  });

  it('takes a typed name that ends at EOF without a newline', async () => {
    const root = hallRoot();
    const r = await hall(['init'], root, { input: 'ivar' });
    expect(r).toMatchObject({ code: 0, stdout: initialisedOffline(root, 'ivar') });
    expect(yamlOf(root).raiders).toEqual({ ivar: OFFLINE });
  });

  it('without --engine: a raider that runs offline, playing a sample script, and no longhouse key', async () => {
    const root = hallRoot();
    const r = await hall(['init', '--name', 'bjorn'], root);
    expect(r).toMatchObject({ code: 0, stdout: initialisedOffline(root, 'bjorn'), stderr: '' });
    expect(yamlOf(root)).toEqual({ raiders: { bjorn: OFFLINE } });
    expect(fs.readFileSync(path.join(root, '.raider', 'script.yml'), 'utf8')).toContain('replies:');

    // The real built-in raider runs it to completion, without any API key.
    const h = await startHallProcess(root, { RAIDER_HALL_RAIDER_BIN: undefined, ANTHROPIC_API_KEY: undefined, OPENAI_API_KEY: undefined });
    try {
      const tap = await doneTap(root);
      const s = await hall(['spawn', 'bjorn', 'first', 'raid'], root);
      expect(s).toMatchObject({ code: 0, stderr: '' });
      expect(await doneOf(tap, spawned(s.stdout).id)).toMatchObject({ status: 'completed', exit_code: 0 });
      tap.close();
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('keeps a script that is already there', async () => {
    const root = hallRoot();
    fs.mkdirSync(path.join(root, '.raider'));
    fs.writeFileSync(path.join(root, '.raider', 'script.yml'), '# mine\n');
    const r = await hall(['init', '--name', 'bjorn'], root);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('playing the script .raider/script.yml;');
    expect(fs.readFileSync(path.join(root, '.raider', 'script.yml'), 'utf8')).toBe('# mine\n');
  });

  it('writes a numbered name under its base name, the entry its singleton slot runs with', async () => {
    const root = hallRoot();
    const r = await hall(['init', '--name', '1bjorn', '--engine', 'scripted'], root);
    expect(r).toMatchObject({
      code: 0,
      stdout:
        `Hall initialised in ${root} with raider 'bjorn'.\n` +
        "'1bjorn' is its singleton slot: spawn 1bjorn to run bjorn's missions one at a time.\n" +
        'Start with: raider hall start\n',
      stderr: '',
    });
    expect(yamlOf(root)).toEqual({ raiders: { bjorn: OFFLINE } });

    // The hall finds the entry for 1bjorn: no "has no entry" notice.
    const h = await startHallProcess(root);
    try {
      const tap = await doneTap(root);
      const s = await hall(['spawn', '1bjorn', 'argv'], root);
      expect(s).toMatchObject({ code: 0, stderr: '' });
      await doneOf(tap, spawned(s.stdout).id);
      tap.close();
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('refuses an unsafe name with exit 2', async () => {
    const root = hallRoot();
    const r = await hall(['init', '--name', '../x'], root);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'../x'");
    expect(fs.existsSync(configOf(root))).toBe(false);
  });
});

describe.concurrent('raider hall add-raider', () => {
  const START = `# The hall of the test\nlonghouse: false\nraiders:\n  # the first one\n  bjorn:\n    persona: caveman # a comment on a value\n    packs: []\ncancel_grace: 1 # seconds\n`;

  it('adds a raider with every option, keeping the other raiders and the comments', async () => {
    const root = hallRoot(START);
    const r = await hall(
      ['add-raider', '1ivar', '--engine', 'openai', '--persona', 'polite', '--model', 'm1', '--pack', 'X', '--pack', 'Y'],
      root,
    );
    expect(r).toMatchObject({
      code: 0,
      stdout: `Added raider 'ivar' to ${configOf(root)}.\n'1ivar' is its singleton slot: spawn 1ivar to run ivar's missions one at a time.\n`,
      stderr: '',
    });
    const text = fs.readFileSync(configOf(root), 'utf8');
    for (const comment of ['# The hall of the test', '# the first one', '# a comment on a value', '# seconds'])
      expect(text).toContain(comment);
    expect(YAML.parse(text)).toEqual({
      longhouse: false,
      raiders: {
        bjorn: { persona: 'caveman', packs: [] },
        ivar: { engine: 'openai', persona: 'polite', model: 'm1', packs: ['X', 'Y'] },
      },
      cancel_grace: 1,
    });
    const loaded = loadHallConfig(root);
    expect(loaded.ok).toBe(true);
  });

  it('after init: writes persona caveman, the packs, and no engine or model by default', async () => {
    const root = hallRoot();
    const init = await hall(['init', '--name', 'bjorn', '--engine', 'openai'], root);
    expect(init).toMatchObject({ code: 0, stdout: initialised(root, 'bjorn') });
    expect(yamlOf(root)).toEqual({ raiders: { bjorn: { engine: 'openai', persona: 'caveman', packs: [] } } });
    const add = await hall(['add-raider', 'ragnar', '--pack', 'git-guru'], root);
    expect(add).toMatchObject({ code: 0, stdout: `Added raider 'ragnar' to ${configOf(root)}.\n` });
    expect(yamlOf(root)).toEqual({
      raiders: { bjorn: { engine: 'openai', persona: 'caveman', packs: [] }, ragnar: { persona: 'caveman', packs: ['git-guru'] } },
    });
    expect(loadHallConfig(root).ok).toBe(true);
  });

  it('refuses a raider that is already defined', async () => {
    const root = hallRoot(START);
    const r = await hall(['add-raider', 'bjorn', '--engine', 'x'], root);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toBe(`Raider 'bjorn' already defined in ${configOf(root)}\n`);
    expect(fs.readFileSync(configOf(root), 'utf8')).toBe(START);
    // A numbered name is the same entry.
    const numbered = await hall(['add-raider', '1bjorn'], root);
    expect(numbered.code).toBe(1);
    expect(numbered.stderr).toBe(
      `Raider 'bjorn' already defined in ${configOf(root)} (1bjorn is its singleton slot and runs with that entry)\n`,
    );
    expect(fs.readFileSync(configOf(root), 'utf8')).toBe(START);
  });

  it('its --help does not offer a numbered name as an entry', async () => {
    const r = await hall(['add-raider', '--help'], hallRoot());
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/\b\d+[a-z]/);
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('spawned as 1NAME, it runs one mission at a time');
  });

  it('needs a .raider-hall.yml in the current directory', async () => {
    const root = hallRoot();
    const r = await hall(['add-raider', 'bjorn'], root);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toBe('No .raider-hall.yml found (run: raider hall init)\n');
    expect(fs.existsSync(configOf(root))).toBe(false);
  });

  it('prints the usage text and exits 2 without NAME', async () => {
    const root = hallRoot(START);
    const r = await hall(['add-raider', '--engine', 'x'], root);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('Usage: raider hall add-raider NAME [--engine E] [--persona P] [--model M] [--pack X]...\n');
    expect(fs.readFileSync(configOf(root), 'utf8')).toBe(START);
  });

  it('refuses an unsafe name with exit 2', async () => {
    const root = hallRoot(START);
    const r = await hall(['add-raider', '../evil'], root);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('../evil');
    expect(fs.readFileSync(configOf(root), 'utf8')).toBe(START);
  });
});

describe.concurrent('configuration errors at start', () => {
  it('a bad value makes start exit 3 naming the file and the key, in the foreground and with --daemon', async () => {
    const root = hallRoot('raiders: { bjorn: {} }\ncancel_grace: soon\n');
    const [fg, daemon] = await Promise.all([hall(['start', root], root), hall(['start', '--daemon'], root)]);
    for (const r of [fg, daemon]) {
      expect(r.code).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(configOf(root));
      expect(r.stderr).toContain('cancel_grace');
    }
    expect(fs.existsSync(socketOf(root))).toBe(false);
    expect(fs.existsSync(pidFileOf(root))).toBe(false);
  });

  it('an ACP agent entry with a key of the built-in raider (engine) makes start exit 3 naming the file and the key', async () => {
    const root = hallRoot('raiders:\n  claude: { acp: { command: claude-agent-acp }, engine: openai }\n');
    const r = await hall(['start', '--quiet'], root);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${configOf(root)}: raiders.claude.engine: engine is a setting of the built-in raider`);
    expect(fs.existsSync(socketOf(root))).toBe(false);
  });

  it('with --inspect too: the inspector it had started does not keep the process alive', async () => {
    const root = hallRoot('raiders: { bjorn: {} }\ncancel_grace: soon\n');
    // A WebSocket URL nobody serves: the inspector's client keeps trying to connect until it is stopped.
    const r = await hall(['start', '--quiet', '--inspect', 'ws://127.0.0.1:9'], root, { timeoutMs: 20_000 });
    expect(r).toMatchObject({ code: 3, signal: null, stdout: '' });
    expect(r.stderr).toContain('cancel_grace');
  });

  it('a YAML syntax error makes start exit 3 naming the file', async () => {
    const root = hallRoot('raiders: [\n  bjorn: {\n');
    const r = await hall(['start', '--quiet'], root);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(configOf(root));
    expect(r.stderr).toContain('YAML');
    expect(fs.existsSync(socketOf(root))).toBe(false);
  });
});
