/**
 * `raider acp` at its edges: a raider the hall does not know, no hall at
 * all, stdin's end for the --stdio bridge, and a hall that stops under the
 * terminal client.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { eventually, hallEnv, RAIDER_BIN, runCli, tempRoot } from '../support/hall-client.js';
import type { Json, TestHall } from '../support/test-hall.js';
import { startAcpHall } from './acp-support.js';

vi.setConfig({ testTimeout: 90_000 });

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

/** `raider ARGS` with stdin left open, as a person at a terminal would. */
function liveCli(args: string[]) {
  const child = spawn(process.execPath, [RAIDER_BIN, ...args], { env: hallEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
  return { child, done, stdout: () => stdout };
}

function notRunning(root: string): string {
  return `the hall in ${root} is not running (no ACP socket at ${path.join(root, '.raider-hall.acp.socket')}); start it with: raider hall start ${root}`;
}

describe('raider acp at its edges', () => {
  it('--raider with a name the hall does not know exits 2 at once, with stdin still open', async () => {
    hall = (await startAcpHall('raiders: { bjorn: {} }\n')).hall;
    const cli = liveCli(['acp', hall.root, '--raider', 'nosuch']);
    const res = await cli.done;
    cli.child.stdin.end();
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown raider nosuch');
  });

  it('without a hall, the terminal client and --stdio say the same thing', async () => {
    const root = fs.realpathSync(tempRoot('acp-nohall-'));
    const request = `${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'session/new', params: { cwd: root, mcpServers: [] } })}\n`;
    const [terminal, stdio] = await Promise.all([runCli(['acp', root]), runCli(['acp', '--stdio', root], { input: request })]);
    expect(terminal).toMatchObject({ code: 1, stdout: '', stderr: `raider acp: ${notRunning(root)}\n` });
    expect(stdio.code).toBe(0);
    expect(JSON.parse(stdio.stdout)).toMatchObject({ id: 7, error: { message: notRunning(root) } });
  });

  it('--stdio answers a line that is no JSON-RPC message with -32600, as the MCP bridge does, and goes on', async () => {
    const root = fs.realpathSync(tempRoot('acp-nohall-'));
    const lines = [
      { a: 1 },
      { jsonrpc: '2.0', id: 4 },
      [1, 2],
      { jsonrpc: '2.0', id: 5, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } },
    ];
    const res = await runCli(['acp', '--stdio', root], { input: lines.map((l) => `${JSON.stringify(l)}\n`).join('') });
    expect(res.code).toBe(0);
    const replies = res.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const invalid = { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' };
    expect(replies.slice(0, 3)).toEqual([
      { jsonrpc: '2.0', id: null, error: invalid },
      { jsonrpc: '2.0', id: 4, error: invalid },
      { jsonrpc: '2.0', id: null, error: invalid },
    ]);
    expect(replies[3]).toMatchObject({ id: 5, result: { protocolVersion: 1 } });
  });

  it("--stdio relays a session/new sent as soon as initialize is answered, after the hall's own initialize", async () => {
    // The bridge answers initialize at once, then connects and initialises the hall: a client's
    // next request must wait for that, or the hall refuses it as uninitialised (acpx did this).
    hall = (await startAcpHall('raiders: { bjorn: {} }\n')).hall;
    const root = hall.root;
    const cli = liveCli(['acp', '--stdio', root]);
    const waiting = new Map<number, (answer: Json) => void>();
    readline.createInterface({ input: cli.child.stdout }).on('line', (l) => {
      const answer = JSON.parse(l) as Json;
      if (typeof answer.id === 'number') waiting.get(answer.id)?.(answer);
    });
    const ask = (id: number, method: string, params: Json) =>
      new Promise<Json>((resolve) => {
        waiting.set(id, resolve);
        cli.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    await ask(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} });
    const created = await ask(2, 'session/new', { cwd: root, mcpServers: [] });
    cli.child.stdin.end();
    await cli.done;
    expect(created).toMatchObject({ id: 2, result: { sessionId: expect.any(String) } });
  });

  it('--stdio ends quietly at the end of stdin, with or without a hall', async () => {
    hall = (await startAcpHall('raiders: { bjorn: {} }\n')).hall;
    const init = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`;
    const list = `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/list', params: {} })}\n`;
    const [withHall, without] = await Promise.all([
      runCli(['acp', '--stdio', hall.root], { input: init + list }),
      runCli(['acp', '--stdio', fs.realpathSync(tempRoot('acp-nohall-'))], { input: init + list }),
    ]);
    for (const res of [withHall, without]) {
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout.split('\n')[0] ?? '')).toMatchObject({ id: 1, result: { protocolVersion: 1 } });
      // Nothing after the end of stdin: no complaint about the hall, no stack trace.
      expect(res.stderr).not.toMatch(/lost the hall|not running|Error|at .*\.js/);
    }
    expect(withHall.stdout).not.toContain('not running');
  });

  it('without DIR, finds the hall above the current directory, as `raider hall` does', async () => {
    hall = (await startAcpHall('raiders: { bjorn: {} }\n')).hall;
    const below = path.join(hall.root, 'src', 'deep');
    fs.mkdirSync(below, { recursive: true });
    const res = await runCli(['acp'], { cwd: below, input: 'answer found from below\n' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`Using the hall in ${fs.realpathSync(hall.root)}`);
    expect(res.stdout).toContain('found from below');
  });

  it('the terminal client says so and exits when the hall stops', async () => {
    const started = await startAcpHall('raiders: { bjorn: {} }\n');
    hall = started.hall;
    const cli = liveCli(['acp', hall.root]);
    await eventually(() => expect(cli.stdout()).toContain('connected to'), 60_000, 20);
    await hall.stop();
    hall = undefined;
    const res = await cli.done;
    cli.child.stdin.end();
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('the hall closed the connection');
  });
});
