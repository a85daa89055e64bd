/**
 * A name with no entry in `.raider-hall.yml` runs with the raider's own
 * defaults (the seed allows it), but the faces say so: the spawn reply
 * carries a `notice`, the CLI prints it on stderr, the MCP tool result
 * includes it. An unknown engine is refused at load: `init --engine nosuch`
 * and `engine: nosuch` exit 3 naming the key and the known engines
 * (issue 14, item 20).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { mcpSocketPath } from '../../src/adapters/mcp/mcp-adapter.js';
import { connectSocket, startMcpHall } from '../mcp/mcp-support.js';
import { doneOf, hall, hallForFile, hallRoot, removeRoots, request, socketOf } from './cli-helpers.js';
import { tempRoot } from '../support/hall-client.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const NOTICE = "bjorn2 has no entry in .raider-hall.yml; it runs with the raider's defaults";

describe('a name with no entry in .raider-hall.yml', () => {
  const file = hallForFile('raiders: { bjorn: {} }\n');

  it('runs, and the spawn reply and the CLI (on stderr) say that it runs with the defaults, for a numbered name too', async () => {
    const reply = await request(socketOf(file.root), { cmd: 'spawn', name: 'bjorn2', mission: 'answer with defaults' });
    expect(reply).toMatchObject({ slot: 'bjorn2', notice: NOTICE });
    expect(await doneOf(file.tap, reply.id)).toMatchObject({ status: 'completed', response: 'with defaults' });

    const cli = await hall(['spawn', 'bjorn2', 'answer', 'again'], file.root);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/^Spawned raider bjorn2-\S+ \(PID \d+\) in slot bjorn2\.\n$/);
    expect(cli.stderr).toBe(`Note: ${NOTICE}.\n`);

    // A numbered name is the entry without its number: 1bjorn2 has no entry either, 1bjorn has one.
    const numbered = await request(socketOf(file.root), { cmd: 'spawn', name: '1bjorn2', mission: 'answer numbered' });
    expect(numbered.notice).toBe(NOTICE);
    await doneOf(file.tap, numbered.id);
  });

  it('a name with an entry gets no notice', async () => {
    const reply = await request(socketOf(file.root), { cmd: 'spawn', name: '1bjorn', mission: 'answer known' });
    expect(reply.notice).toBeUndefined();
    const cli = await hall(['spawn', 'bjorn', 'answer', 'known'], file.root);
    expect(cli.stderr).toBe('');
    await doneOf(file.tap, reply.id);
  });
});

describe('MCP spawn_raider', () => {
  it('includes the notice in its result', async () => {
    const h = await startMcpHall({ env: { HOME: tempRoot('mcp-home-') } });
    const mcp = await connectSocket(mcpSocketPath(h.root));
    try {
      const spawned = await mcp.call('spawn_raider', { name: 'bjorn2', mission: 'answer from MCP' });
      expect(spawned.isError).toBe(false);
      expect(spawned.json).toMatchObject({ slot: 'bjorn2', notice: NOTICE });
      const known = await mcp.call('spawn_raider', { name: 'bjorn', mission: 'answer from MCP' });
      expect(known.json?.notice).toBeUndefined();
    } finally {
      await mcp.close().catch(() => {});
      await h.stop();
    }
  });
});

describe('an unknown engine', () => {
  it('init --engine nosuch exits 3 naming the option and the known engines, and writes nothing', async () => {
    const root = hallRoot();
    const r = await hall(['init', '--name', 'bjorn', '--engine', 'nosuch'], root);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe("--engine: unknown engine 'nosuch' (known: anthropic, openai, scripted)\n");
    expect(fs.existsSync(path.join(root, '.raider-hall.yml'))).toBe(false);
    const add = hallRoot('raiders: { bjorn: {} }\n');
    expect((await hall(['add-raider', 'ivar', '--engine', 'nosuch'], add)).code).toBe(3);
  });

  it('engine: nosuch in the config stops the start with exit 3, naming the file, the key and the known engines', async () => {
    const root = hallRoot('raiders: { bjorn: { engine: nosuch } }\n');
    const r = await hall(['start', '--daemon'], root);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('raiders.bjorn.engine: expected an engine: one of anthropic, openai, scripted, got "nosuch"');
    expect(r.stderr).toContain(path.join(root, '.raider-hall.yml'));
    expect(fs.existsSync(socketOf(root))).toBe(false);
  });
});
