/**
 * `raider hall mcp DIR` (the built CLI) driven by the MCP SDK's stdio client:
 * every tool through the bridge, a hall that is not running, a hall that
 * comes up (and restarts) while the bridge runs, and stdin EOF.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMcpAdapter, mcpAdapter } from '../../src/adapters/mcp/mcp-adapter.js';
import { HALL_TOOL_NAMES } from '../../src/adapters/mcp/mcp-tools.js';
import { eventually, runStarted, hallEnv, RAIDER_BIN, startTestHall, tempRoot } from '../support/test-hall.js';
import { connectStdio, MCP_CONFIG, mcpScope, startMcpHall } from './mcp-support.js';

const opened = mcpScope();

describe('raider hall mcp (stdio bridge)', () => {
  it('every tool through the bridge', async () => {
    const home = tempRoot('mcp-home-');
    opened.hall = await startMcpHall({ env: { HOME: home } });
    opened.mcp = await connectStdio(opened.hall.root);
    const c = opened.mcp;
    expect(c.client.getServerVersion()?.name).toBe('raider-hall');
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...HALL_TOOL_NAMES].sort());

    const spawned = await c.call('spawn_raider', { name: 'bjorn', mission: 'answer via stdio' });
    expect(spawned).toMatchObject({ isError: false, json: { slot: 'bjorn' } });
    const id = spawned.json!.id as string;
    const done = await c.call('wait_for_raider', { id, timeout_s: 20 });
    expect(done.json).toMatchObject({ type: 'raider.done', id, status: 'completed', response: 'via stdio' });
    const logs = await c.call('raider_logs', { id });
    expect(logs.text).toContain(`[hall] raider ${id} completed: via stdio`);

    const long = await c.call('spawn_raider', { name: 'bjorn', mission: 'wait 30' });
    const longId = long.json!.id as string;
    await runStarted(long.json!.events_path);
    expect((await c.call('list_raiders')).json!.raiders).toEqual([expect.objectContaining({ id: longId })]);
    expect((await c.call('hall_status')).json).toMatchObject({ running: 1, root: opened.hall.root, mcp: { clients: 1 } });
    expect((await c.call('wait_for_raider', { id: longId, timeout_s: 0.2 })).json).toEqual({
      id: longId,
      status: 'still running',
      timeout_s: 0.2,
    });
    expect((await c.call('cancel_raider', { id: longId })).json).toEqual({ cancelled: 1, id: longId });
    expect((await c.call('wait_for_raider', { id: longId, timeout_s: 20 })).json).toMatchObject({ status: 'cancelled' });

    const other = await c.call('spawn_raider', { name: 'bjorn', mission: 'wait 30' });
    await runStarted(other.json!.events_path);
    expect((await c.call('kill_raider', { id: other.json!.id })).json).toEqual({ killed: 1, id: other.json!.id });
    expect((await c.call('wait_for_raider', { id: other.json!.id, timeout_s: 20 })).json).toMatchObject({ status: 'interrupted' });

    const slot = await c.call('spawn_raider', { name: '1bjorn', mission: 'answer slot' });
    await c.call('wait_for_raider', { id: slot.json!.id, timeout_s: 20 });
    expect((await c.call('reset_session', { binding: 'slot:1bjorn' })).json).toMatchObject({ reset: 1, binding: 'slot:1bjorn' });

    expect(await c.call('send_telegram', { bot: 'ops', chat_id: 42, text: 'hi' })).toMatchObject({
      isError: true,
      text: 'telegram not configured in .raider-hall.yml',
    });
    expect(await c.call('kill_raider', { id: 'nobody-1' })).toMatchObject({ isError: true, text: 'raider not found' });
    expect(await c.call('wait_for_raider', { id: 'nobody-1', timeout_s: 1 })).toMatchObject({
      isError: true,
      text: expect.stringContaining('raider not found'),
    });
    const refused = await c.call('spawn_raider', { name: 'ivar', mission: 'answer no' });
    expect(refused).toMatchObject({ isError: true, json: { status: 'refused', reason: 'provider_not_stored' } });
  });

  it('starts without a hall, answers with an error naming the directory, and works once the hall is up (and after a restart)', async () => {
    const root = tempRoot('mcp-later-');
    fs.writeFileSync(`${root}/.raider-hall.yml`, MCP_CONFIG);
    const stderr: string[] = [];
    opened.mcp = await connectStdio(root, stderr);
    const c = opened.mcp;
    expect((await c.client.listTools()).tools).toHaveLength(HALL_TOOL_NAMES.length);
    const down = await c.call('hall_status');
    expect(down.isError).toBe(true);
    expect(down.text).toContain(`the hall in ${root} is not running`);
    expect(down.text).toContain(`raider hall start ${root}`);
    const downSpawn = await c.call('spawn_raider', { name: 'bjorn', mission: 'answer x' });
    expect(downSpawn.isError).toBe(true);

    opened.hall = await startTestHall({ root, adapters: [mcpAdapter] });
    const status = await c.call('hall_status');
    expect(status).toMatchObject({ isError: false, json: { running: 0, root } });
    const { json } = await c.call('spawn_raider', { name: 'bjorn', mission: 'wait 30' });
    await runStarted(json!.events_path);
    const listeners = opened.hall.hall.bus.subscriberCount();
    const waiting = c.call('wait_for_raider', { id: json!.id, timeout_s: 30 });
    // The wait is pending in the hall once it listens on the bus.
    await eventually(() => expect(opened.hall!.hall.bus.subscriberCount()).toBe(listeners + 1));

    // The hall stops under a pending wait: a clear error, and the bridge lives on.
    await opened.hall.stop();
    opened.hall = undefined;
    const lost = await waiting;
    expect(lost.isError).toBe(true);
    expect(lost.text).toMatch(/hall is stopping|went away/);
    const again = await c.call('list_raiders');
    expect(again).toMatchObject({ isError: true, text: expect.stringContaining(`the hall in ${root} is not running`) });

    opened.hall = await startTestHall({ root, adapters: [mcpAdapter] });
    const back = await c.call('spawn_raider', { name: 'bjorn', mission: 'answer back again' });
    expect(back.isError).toBe(false);
    expect((await c.call('wait_for_raider', { id: back.json!.id, timeout_s: 20 })).json).toMatchObject({
      status: 'completed',
      response: 'back again',
    });
    expect(stderr.join('')).toContain('connected to the hall');
  });

  it('a hall without mcp: { enable: true } is named as such', async () => {
    opened.hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n', adapters: [mcpAdapter] });
    opened.mcp = await connectStdio(opened.hall.root);
    const r = await opened.mcp.call('hall_status');
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`the hall in ${opened.hall.root} is running but does not serve MCP`);
    expect(r.text).toContain('mcp: { enable: true }');
  });

  it('relays progress of a long wait to a client that asked for it', async () => {
    opened.hall = await startTestHall({ config: MCP_CONFIG, adapters: [createMcpAdapter({ progressIntervalMs: 100 })] });
    opened.mcp = await connectStdio(opened.hall.root);
    const { json } = await opened.mcp.call('spawn_raider', { name: 'bjorn', mission: 'wait 0.8' });
    const progress: number[] = [];
    const result = await opened.mcp.client.callTool({ name: 'wait_for_raider', arguments: { id: json!.id, timeout_s: 20 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
      timeout: 30_000,
    });
    expect(result.structuredContent).toMatchObject({ status: 'completed' });
    expect(progress.length).toBeGreaterThanOrEqual(2);
  });

  it('exits 0 on stdin EOF; a directory that does not exist is a usage error', async () => {
    const root = tempRoot('mcp-eof-');
    const child = spawn(process.execPath, [RAIDER_BIN, 'hall', 'mcp', root], { env: hallEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`,
    );
    await eventually(() => expect(stdout).toContain('"id":1'));
    expect(JSON.parse(stdout.split('\n')[0]!).result.serverInfo.name).toBe('raider-hall');
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);

    const missing = spawn(process.execPath, [RAIDER_BIN, 'hall', 'mcp', `${root}/nope`], {
      env: hallEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let err = '';
    missing.stderr.on('data', (d: Buffer) => (err += d.toString()));
    expect(await new Promise<number | null>((resolve) => missing.on('close', resolve))).toBe(2);
    expect(err).toContain('Not a directory');
  });
});
