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
    expect(yamlOf(root)).toEqual({ longhouse: false, raiders: { bjorn: { engine: 'anthropic', persona: 'polite', packs: [] } } });
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

  it('asks for the name on stdin without --name', async () => {
    const root = hallRoot();
    const r = await hall(['init'], root, { input: 'astrid\n' });
    expect(r).toMatchObject({ code: 0, stdout: `${PROMPT}${initialised(root, 'astrid')}` });
    expect(yamlOf(root).raiders).toEqual({ astrid: { persona: 'caveman', packs: [] } });
  });

  it('exits 1 without writing anything when the typed name is empty', async () => {
    const root = hallRoot();
    const r = await hall(['init'], root, { input: '\n' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(PROMPT);
    expect(fs.existsSync(configOf(root))).toBe(false);
  });

  it('exits 1 without writing anything when stdin ends before a name (EOF)', async () => {
    const root = hallRoot();
    const r = await hall(['init'], root, { input: '' });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toBe('');
    expect(fs.existsSync(configOf(root))).toBe(false);
  });

  it('takes a typed name that ends at EOF without a newline', async () => {
    const root = hallRoot();
    const r = await hall(['init'], root, { input: 'ivar' });
    expect(r).toMatchObject({ code: 0, stdout: `${PROMPT}${initialised(root, 'ivar')}` });
    expect(yamlOf(root).raiders).toEqual({ ivar: { persona: 'caveman', packs: [] } });
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
    expect(r).toMatchObject({ code: 0, stdout: `Added raider '1ivar' to ${configOf(root)}.\n`, stderr: '' });
    const text = fs.readFileSync(configOf(root), 'utf8');
    for (const comment of ['# The hall of the test', '# the first one', '# a comment on a value', '# seconds'])
      expect(text).toContain(comment);
    expect(YAML.parse(text)).toEqual({
      longhouse: false,
      raiders: {
        bjorn: { persona: 'caveman', packs: [] },
        '1ivar': { engine: 'openai', persona: 'polite', model: 'm1', packs: ['X', 'Y'] },
      },
      cancel_grace: 1,
    });
    const loaded = loadHallConfig(root);
    expect(loaded.ok).toBe(true);
  });

  it('after init: writes persona caveman, the packs, and no engine or model by default', async () => {
    const root = hallRoot();
    const init = await hall(['init', '--name', 'bjorn'], root);
    expect(init).toMatchObject({ code: 0, stdout: initialised(root, 'bjorn') });
    expect(yamlOf(root)).toEqual({ longhouse: false, raiders: { bjorn: { persona: 'caveman', packs: [] } } });
    const add = await hall(['add-raider', 'ragnar', '--pack', 'git-guru'], root);
    expect(add).toMatchObject({ code: 0, stdout: `Added raider 'ragnar' to ${configOf(root)}.\n` });
    expect(yamlOf(root)).toEqual({
      longhouse: false,
      raiders: { bjorn: { persona: 'caveman', packs: [] }, ragnar: { persona: 'caveman', packs: ['git-guru'] } },
    });
    expect(loadHallConfig(root).ok).toBe(true);
  });

  it('refuses a raider that is already defined', async () => {
    const root = hallRoot(START);
    const r = await hall(['add-raider', 'bjorn', '--engine', 'x'], root);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toBe(`Raider 'bjorn' already defined in ${configOf(root)}\n`);
    expect(fs.readFileSync(configOf(root), 'utf8')).toBe(START);
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
