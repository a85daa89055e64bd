/**
 * The ACP bridge is lean, since one runs per ACP run (docs/agents.md, "The
 * process model"): the hall starts it with V8 flags that keep its memory
 * small (src/actors/raider-command.ts), RAIDER_HALL_ACP_NODE_FLAGS replaces
 * them, and its bundle is minified and carries zod in English only
 * (scripts/bundle-cli.ts).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ACP_BRIDGE_NODE_FLAGS, acpBridgeNodeFlags, resolveAcpBridgeCommand } from '../../src/actors/raider-command.js';
import { REPO, tempRoot, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { eventually, hallRoot, removeRoots, request, socketOf, startHallProcess } from './cli-helpers.js';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const BUNDLE = path.join(REPO, 'dist', 'acp-raider', 'acp-raider.bundle.cjs');

describe("the ACP bridge's V8 flags", () => {
  it('are ours by default, and the words of RAIDER_HALL_ACP_NODE_FLAGS when it is set (empty: none)', () => {
    expect(ACP_BRIDGE_NODE_FLAGS).toEqual(['--max-semi-space-size=1', '--lite-mode', '--no-expose-wasm', '--v8-pool-size=1']);
    expect(acpBridgeNodeFlags({})).toEqual(ACP_BRIDGE_NODE_FLAGS);
    expect(acpBridgeNodeFlags({ RAIDER_HALL_ACP_NODE_FLAGS: '' })).toEqual([]);
    expect(acpBridgeNodeFlags({ RAIDER_HALL_ACP_NODE_FLAGS: ' --lite-mode  --stack-size=900 ' })).toEqual([
      '--lite-mode',
      '--stack-size=900',
    ]);
    const bridge = resolveAcpBridgeCommand({});
    expect(bridge.command).toBe(process.execPath);
    expect(bridge.prefixArgs).toEqual([...ACP_BRIDGE_NODE_FLAGS, path.join(REPO, 'bin', 'raider'), 'acp-client']);
  });

  it('are flags this Node takes, without a word on stderr (which goes to the slot log)', () => {
    const r = spawnSync(process.execPath, [...ACP_BRIDGE_NODE_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('ok');
  });

  it.each([
    [undefined, 'at most 2 MiB', (mib: number) => expect(mib).toBeLessThanOrEqual(2)],
    ['', 'more than 2 MiB', (mib: number) => expect(mib).toBeGreaterThan(2)],
  ])(
    "a bridge the hall started (RAIDER_HALL_ACP_NODE_FLAGS=%j) has %s of young generation once its agent's turn runs",
    async (flags, _, check) => {
      const root = hallRoot(`raiders:\n  scripted: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)} } }\n`);
      const out = path.join(tempRoot('acp-bridge-memory-'), 'memory.json');
      const h = await startHallProcess(root, {
        ...(flags !== undefined ? { RAIDER_HALL_ACP_NODE_FLAGS: flags } : {}),
        BENCH_MEMORY_OUT: out,
        // Every process of the hall loads the hook; only the bridge gets the signal that makes it write.
        NODE_OPTIONS: `--import ${path.join(REPO, 'bench', 'memory-hook.mjs')}`,
      });
      try {
        const run = await request(socketOf(root), { cmd: 'spawn', name: 'scripted', mission: 'hang' });
        const events = path.join(root, '.raider-hall', 'logs', `${run.id}.events.jsonl`);
        await eventually(() => expect(fs.existsSync(events) ? fs.readFileSync(events, 'utf8') : '').toContain('waiting'), 30_000, 20);
        const cmdline = fs.readFileSync(`/proc/${run.pid}/cmdline`, 'utf8').split('\0');
        expect(cmdline.includes('--lite-mode')).toBe(flags === undefined);
        process.kill(run.pid, 'SIGUSR2');
        const spaces = await eventually(() => JSON.parse(fs.readFileSync(out, 'utf8')).spaces as Record<string, number>);
        check((spaces.new_space ?? 0) / 1024 / 1024);
        await request(socketOf(root), { cmd: 'cancel', id: run.id });
      } finally {
        await h.stop();
      }
    },
  );
});

describe("the ACP bridge's bundle", () => {
  it('is minified, with zod in English only (its other translations are not loaded)', () => {
    const text = fs.readFileSync(BUNDLE, 'utf8');
    expect(fs.statSync(BUNDLE).size).toBeLessThan(400 * 1024);
    // zod's English message for a wrong type, and (as esbuild writes it) its German one.
    expect(text).toContain('Invalid input: expected');
    expect(text).not.toContain('Eingabe: erwartet');
    const help = spawnSync(process.execPath, [path.join(REPO, 'bin', 'raider'), 'acp-client', '--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/^usage: raider acp-client /);
  });
});
