/**
 * bin/raider runs `raider hall ...` and the built-in raider from their
 * CommonJS bundles only while a bundle is current: a missing bundle, one that
 * fails to load, or one older than a module in it (a `tsc` without `npm run
 * build`) falls back to dist/cli/main.js, which runs every command. Checked on
 * a copy of bin/ with a stand-in dist/ whose bundles and main say which one ran.
 * The daemon's bundle (dist/daemon/, loaded by src/cli/daemon-bundle.ts) follows
 * the same rule.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshBundle, importBundled } from '../../src/os/esm-bundle.js';
import { REPO, tempRoot } from '../support/hall-client.js';

function install(
  bundle: string | null,
  raiderBundle: string | null = null,
  acpBundle: string | null = null,
): { root: string; run: (...args: string[]) => string } {
  const root = tempRoot('bin-routing-');
  fs.mkdirSync(path.join(root, 'bin'));
  for (const file of ['raider', 'package.json']) fs.copyFileSync(path.join(REPO, 'bin', file), path.join(root, 'bin', file));
  const cli = path.join(root, 'dist', 'cli');
  fs.mkdirSync(path.join(cli, 'hall'), { recursive: true });
  fs.writeFileSync(path.join(root, 'dist', 'package.json'), '{ "type": "module" }\n');
  fs.writeFileSync(path.join(cli, 'main.js'), "export async function main(argv) { console.log('main', argv.join(' ')); return 0; }\n");
  fs.writeFileSync(path.join(cli, 'hall', 'render.js'), 'export {};\n');
  if (bundle !== null) fs.writeFileSync(path.join(cli, 'hall.bundle.cjs'), bundle);
  fs.mkdirSync(path.join(root, 'dist', 'raider'));
  fs.writeFileSync(path.join(root, 'dist', 'raider', 'run.js'), 'export {};\n');
  if (raiderBundle !== null) fs.writeFileSync(path.join(root, 'dist', 'raider', 'raider.bundle.cjs'), raiderBundle);
  fs.mkdirSync(path.join(root, 'dist', 'acp-raider'));
  fs.writeFileSync(path.join(root, 'dist', 'acp-raider', 'acp-raider.js'), 'export {};\n');
  if (acpBundle !== null) fs.writeFileSync(path.join(root, 'dist', 'acp-raider', 'acp-raider.bundle.cjs'), acpBundle);
  const run = (...args: string[]) => execFileSync(process.execPath, [path.join(root, 'bin', 'raider'), ...args], { encoding: 'utf8' });
  return { root, run };
}

const BUNDLE = [
  "exports.hallCommand = async (argv) => { console.log('bundle', argv.join(' ')); return 0; };",
  "exports.bundleInputs = ['hall/render.js'];",
].join('\n');

const RAIDER_BUNDLE = [
  "exports.runRaiderCli = async (argv) => { console.log('raider bundle', argv.join(' ')); return 0; };",
  "exports.bundleInputs = ['run.js'];",
].join('\n');

const ACP_BUNDLE = [
  "exports.runAcpRaider = async (argv) => { console.log('acp bundle', argv.join(' ')); return 0; };",
  "exports.bundleInputs = ['acp-raider.js'];",
].join('\n');

function setMtime(file: string, seconds: number): void {
  fs.utimesSync(file, seconds, seconds);
}

describe('bin/raider', () => {
  it('runs raider hall from a current bundle, and everything else from main', () => {
    const { root, run } = install(BUNDLE);
    setMtime(path.join(root, 'dist/cli/hall/render.js'), 1_000_000);
    setMtime(path.join(root, 'dist/cli/hall.bundle.cjs'), 2_000_000);
    expect(run('hall', 'status')).toBe('bundle status\n');
    expect(run('demo')).toBe('main demo\n');
  });

  it('falls back to main when a module is newer than the bundle', () => {
    const { root, run } = install(BUNDLE);
    setMtime(path.join(root, 'dist/cli/hall.bundle.cjs'), 1_000_000);
    setMtime(path.join(root, 'dist/cli/hall/render.js'), 2_000_000);
    expect(run('hall', 'status')).toBe('main hall status\n');
  });

  it('falls back to main when the bundle is missing or does not load', () => {
    expect(install(null).run('hall', 'ps')).toBe('main hall ps\n');
    expect(install("throw new Error('half written');\n").run('hall', 'ps')).toBe('main hall ps\n');
  });

  it('runs the built-in raider from its current bundle (help included), and the other commands from main', () => {
    const { root, run } = install(null, RAIDER_BUNDLE);
    setMtime(path.join(root, 'dist/raider/run.js'), 1_000_000);
    setMtime(path.join(root, 'dist/raider/raider.bundle.cjs'), 2_000_000);
    expect(run('--', 'fix', 'it')).toBe('raider bundle -- fix it\n');
    expect(run('--version')).toBe('raider bundle --version\n');
    expect(run('help')).toBe('raider bundle --help\n');
    expect(run('acp', '--stdio')).toBe('main acp --stdio\n');
    expect(run('provider', 'list')).toBe('main provider list\n');
  });

  it('runs the built-in raider from main when its bundle is stale, missing or broken', () => {
    const stale = install(null, RAIDER_BUNDLE);
    setMtime(path.join(stale.root, 'dist/raider/raider.bundle.cjs'), 1_000_000);
    setMtime(path.join(stale.root, 'dist/raider/run.js'), 2_000_000);
    expect(stale.run('--', 'fix')).toBe('main -- fix\n');
    expect(install(null).run('--', 'fix')).toBe('main -- fix\n');
    expect(install(null, "throw new Error('half written');\n").run('--', 'fix')).toBe('main -- fix\n');
  });

  it('runs the ACP bridge (acp-client) from its current bundle, and from main when the bundle is stale or missing', () => {
    const { root, run } = install(null, null, ACP_BUNDLE);
    setMtime(path.join(root, 'dist/acp-raider/acp-raider.js'), 1_000_000);
    setMtime(path.join(root, 'dist/acp-raider/acp-raider.bundle.cjs'), 2_000_000);
    expect(run('acp-client', '--agent-command', 'x', '--', 'go')).toBe('acp bundle --agent-command x -- go\n');
    setMtime(path.join(root, 'dist/acp-raider/acp-raider.js'), 3_000_000);
    expect(run('acp-client', '--', 'go')).toBe('main acp-client -- go\n');
    expect(install(null).run('acp-client', '--', 'go')).toBe('main acp-client -- go\n');
  });

  it('has a current bundle of the ACP bridge after npm run build', () => {
    const bundle = path.join(REPO, 'dist', 'acp-raider', 'acp-raider.bundle.cjs');
    const built = fs.statSync(bundle).mtimeMs;
    const loaded: { bundleInputs: string[] } = createRequire(import.meta.url)(bundle);
    expect(loaded.bundleInputs).toEqual(expect.arrayContaining(['./acp-raider.js', './agent-process.js']));
    for (const input of loaded.bundleInputs) expect(fs.statSync(path.join(path.dirname(bundle), input)).mtimeMs).toBeLessThanOrEqual(built);
  });
});

describe('the ES module bundles (dist/daemon/, dist/raider/engines-bundle/)', () => {
  function bundleDir(inputs: unknown): string {
    const dir = path.join(tempRoot('daemon-bundle-'), 'daemon');
    fs.mkdirSync(path.join(dir, '..', 'cli'), { recursive: true });
    fs.writeFileSync(path.join(dir, '..', 'cli', 'daemon.js'), 'export {};\n');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'daemon.js'), 'export {};\n');
    fs.writeFileSync(path.join(dir, 'inputs.json'), JSON.stringify(inputs));
    return dir;
  }

  it('is used while no module it was made of is newer than it', () => {
    const dir = bundleDir(['../cli/daemon.js']);
    setMtime(path.join(dir, '../cli/daemon.js'), 1_000_000);
    setMtime(path.join(dir, 'daemon.js'), 2_000_000);
    expect(freshBundle(dir, 'daemon.js')).toBe(true);
    setMtime(path.join(dir, '../cli/daemon.js'), 3_000_000);
    expect(freshBundle(dir, 'daemon.js')).toBe(false);
  });

  it('is not used when a module it names is gone, or its list of modules is not one', () => {
    expect(freshBundle(bundleDir(['../cli/gone.js']), 'daemon.js')).toBe(false);
    expect(freshBundle(bundleDir({ not: 'a list' }), 'daemon.js')).toBe(false);
    expect(freshBundle(path.join(tempRoot('daemon-bundle-'), 'none'), 'daemon.js')).toBe(false);
  });

  it('is the module importBundled loads while fresh; once stale, the fallback is', async () => {
    const dir = bundleDir(['../cli/daemon.js']);
    fs.writeFileSync(path.join(dir, 'entry.mjs'), "export const from = 'bundle';\n");
    setMtime(path.join(dir, '../cli/daemon.js'), 1_000_000);
    setMtime(path.join(dir, 'entry.mjs'), 2_000_000);
    const fallback = async () => ({ from: 'dist' });
    expect(await importBundled(dir, 'entry.mjs', fallback)).toMatchObject({ from: 'bundle' });
    setMtime(path.join(dir, '../cli/daemon.js'), 3_000_000);
    expect(await importBundled(dir, 'entry.mjs', fallback)).toEqual({ from: 'dist' });
  });

  it('is current after npm run build, and names the modules of the daemon', () => {
    const dir = path.join(REPO, 'dist', 'daemon');
    expect(freshBundle(dir, 'daemon.js')).toBe(true);
    const inputs: unknown = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
    expect(inputs).toEqual(
      expect.arrayContaining(['../cli/hall/daemon.js', '../actors/hall-supervisor.js', '../adapters/os/fork-server.js']),
    );
  });

  it("of the built-in raider's model engines (dist/raider/engines-bundle/) is current after npm run build too", () => {
    const dir = path.join(REPO, 'dist', 'raider', 'engines-bundle');
    expect(freshBundle(dir, 'model-engine.js')).toBe(true);
    const inputs: unknown = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
    expect(inputs).toEqual(expect.arrayContaining(['../engines/model-engine.js', '../engines/ai-sdk.js']));
  });
});
