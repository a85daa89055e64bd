/** The hall's MCP server on `.raider-hall.mcp`, driven by the MCP SDK's client. */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HallAdapterFactory } from '../../src/ports/hall-services.js';
import { mcpAdapter, mcpSocketPath } from '../../src/adapters/mcp/mcp-adapter.js';
import { HALL_TOOL_NAMES } from '../../src/adapters/mcp/mcp-tools.js';
import { eventually, runStarted, startTestHall, tempRoot, type Json } from '../support/test-hall.js';
import { connectSocket, MCP_CONFIG, mcpScope, startMcpHall, type McpConnection } from './mcp-support.js';
import { defaultAdapters } from '../../src/actors/default-adapters.js';

const opened = mcpScope();

async function up(options: Parameters<typeof startMcpHall>[0] = {}): Promise<McpConnection> {
  opened.hall = await startMcpHall({ env: { HOME: tempRoot('mcp-home-') }, ...options });
  opened.mcp = await connectSocket(mcpSocketPath(opened.hall.root));
  return opened.mcp;
}

describe('the MCP socket', () => {
  it('is served only with mcp: { enable: true }, mode 0600, and removed at stop', async () => {
    const off = await startTestHall({ config: 'raiders: { bjorn: {} }\n', adapters: [mcpAdapter] });
    expect(fs.existsSync(mcpSocketPath(off.root))).toBe(false);
    await off.stop();

    await up();
    const socket = mcpSocketPath(opened.hall!.root);
    expect(path.basename(socket)).toBe('.raider-hall.mcp');
    expect(fs.statSync(socket).mode & 0o777).toBe(0o600);
    const status = await opened.hall!.request({ cmd: 'status' });
    expect(status.mcp).toMatchObject({ socket, listening: true, clients: 1 });
    await opened.hall!.stop();
    opened.hall = undefined;
    expect(fs.existsSync(socket)).toBe(false);
  });

  it('is served by the adapters `raider hall start` runs when the config enables it, and only then', async () => {
    const off = await startTestHall({ config: 'raiders: { bjorn: {} }\n', adapters: defaultAdapters });
    expect(fs.existsSync(mcpSocketPath(off.root))).toBe(false);
    // Nothing of the faces the config does not ask for: no MCP, no cron, no Telegram.
    const plain = await off.request({ cmd: 'status' });
    expect(Object.keys(plain).filter((key) => ['mcp', 'cron', 'telegram'].includes(key))).toEqual([]);
    await off.stop();

    opened.hall = await startTestHall({ config: MCP_CONFIG, adapters: defaultAdapters });
    const socket = mcpSocketPath(opened.hall.root);
    opened.mcp = await connectSocket(socket);
    expect((await opened.mcp.client.listTools()).tools.map((t) => t.name).sort()).toEqual([...HALL_TOOL_NAMES].sort());
    expect((await opened.hall.request({ cmd: 'status' })).mcp).toMatchObject({ socket, listening: true, clients: 1 });
  });

  it('lists every hall tool with a description and a JSON schema', async () => {
    const c = await up();
    expect(c.client.getServerVersion()?.name).toBe('raider-hall');
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...HALL_TOOL_NAMES].sort());
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.spawn_raider!.inputSchema.required).toEqual(['name', 'mission']);
    expect(Object.keys(byName.send_telegram!.inputSchema.properties!).sort()).toEqual(['bot', 'chat_id', 'message_thread_id', 'text']);
    expect(byName.send_telegram!.inputSchema.required).toEqual(['bot', 'chat_id', 'text']);
    expect(byName.wait_for_raider!.inputSchema.required).toEqual(['id']);
    expect(byName.list_raiders!.annotations?.readOnlyHint).toBe(true);
    expect(byName.kill_raider!.annotations?.destructiveHint).toBe(true);
  });

  it('spawn_raider, wait_for_raider, raider_logs: a run from start to outcome', async () => {
    const c = await up();
    const spawned = await c.call('spawn_raider', { name: 'bjorn', mission: 'answer hello from MCP' });
    expect(spawned.isError).toBe(false);
    expect(spawned.json).toMatchObject({ slot: 'bjorn', pid: expect.any(Number), events_path: expect.stringContaining('.events.jsonl') });
    expect(JSON.parse(spawned.text)).toEqual(spawned.json);
    const id = spawned.json!.id as string;
    expect(id).toMatch(/^bjorn-\d+(\.\d+)?$/);

    const done = await c.call('wait_for_raider', { id, timeout_s: 20 });
    expect(done.isError).toBe(false);
    expect(done.json).toMatchObject({
      type: 'raider.done',
      id,
      slot: 'bjorn',
      status: 'completed',
      response: 'hello from MCP',
      exit_code: 0,
    });

    const logs = await c.call('raider_logs', { id });
    expect(logs.isError).toBe(false);
    expect(logs.text).toContain(`[hall] raider ${id} started`);
    expect(logs.text).toContain(`[hall] raider ${id} completed: hello from MCP`);
    expect(logs.json).toBeUndefined();
  });

  it('wait_for_raider: "still running" at the timeout, then the outcome; a run that ended before the call', async () => {
    const c = await up();
    const { json } = await c.call('spawn_raider', { name: 'bjorn', mission: 'wait 1.5' });
    const id = json!.id as string;
    const early = await c.call('wait_for_raider', { id, timeout_s: 0.2 });
    expect(early.isError).toBe(false);
    expect(early.json).toEqual({ id, status: 'still running', timeout_s: 0.2 });
    expect(early.text).toContain('still running');
    const done = await c.call('wait_for_raider', { id, timeout_s: 20 });
    expect(done.json).toMatchObject({ type: 'raider.done', id, status: 'completed' });

    // Ended before this call: the hall still has the event itself.
    const again = await c.call('wait_for_raider', { id, timeout_s: 5 });
    expect(again.isError).toBe(false);
    expect(again.json).toMatchObject({ ...done.json, ended_before_wait: true, source: 'event' });

    // A later hall has no such event: the outcome comes from the events file...
    const root = opened.hall!.root;
    await opened.mcp!.close();
    await opened.hall!.stop();
    opened.hall = await startMcpHall({ root, env: { HOME: tempRoot('mcp-home-') } });
    opened.mcp = await connectSocket(mcpSocketPath(root));
    const fromFile = await opened.mcp.call('wait_for_raider', { id, timeout_s: 5 });
    expect(fromFile.json).toMatchObject({
      type: 'raider.done',
      id,
      slot: 'bjorn',
      status: 'completed',
      ended_before_wait: true,
      source: 'events file',
    });

    // ...and with its events file gone (pruned), from the slot log's result line.
    fs.rmSync(json!.events_path as string);
    const fromLog = await opened.mcp.call('wait_for_raider', { id, timeout_s: 0 });
    expect(fromLog.json).toMatchObject({ id, status: 'completed', source: 'slot log' });
  });

  it('wait_for_raider never misses a run that ends while it subscribes', async () => {
    const c = await up();
    for (let i = 0; i < 5; i++) {
      const { json } = await c.call('spawn_raider', { name: 'bjorn', mission: `answer quick ${i}` });
      const done = await c.call('wait_for_raider', { id: json!.id, timeout_s: 20 });
      expect(done.isError).toBe(false);
      expect(done.json).toMatchObject({ id: json!.id, status: 'completed', response: `quick ${i}` });
    }
  });

  it('a failed run is an outcome, not a tool error', async () => {
    const c = await up();
    const { json } = await c.call('spawn_raider', { name: 'bjorn', mission: 'fail it broke' });
    const done = await c.call('wait_for_raider', { id: json!.id, timeout_s: 20 });
    expect(done.isError).toBe(false);
    expect(done.json).toMatchObject({ status: 'failed', error: 'it broke', exit_code: 1 });
  });

  it('list_raiders and hall_status show a running raider; cancel_raider cancels it', async () => {
    const c = await up();
    const { json } = await c.call('spawn_raider', { name: 'bjorn', mission: 'wait 30' });
    const id = json!.id as string;
    await runStarted(json!.events_path);
    const ps = await c.call('list_raiders');
    expect(ps.json!.raiders).toEqual([expect.objectContaining({ id, slot: 'bjorn', base_name: 'bjorn', mission: 'wait 30' })]);
    const status = await c.call('hall_status');
    expect(status.json).toMatchObject({ running: 1, root: opened.hall!.root, slots: ['bjorn'], mcp: { clients: 1 } });

    const cancelled = await c.call('cancel_raider', { id });
    expect(cancelled).toMatchObject({ isError: false, json: { cancelled: 1, id } });
    const done = await c.call('wait_for_raider', { id, timeout_s: 20 });
    expect(done.json).toMatchObject({ id, status: 'cancelled', cancel_requested: true });
    expect((await c.call('list_raiders')).json).toEqual({ raiders: [] });
  });

  it('kill_raider ends a run as interrupted', async () => {
    const c = await up();
    const { json } = await c.call('spawn_raider', { name: 'bjorn', mission: 'wait 30' });
    const id = json!.id as string;
    await runStarted(json!.events_path);
    const waiting = c.call('wait_for_raider', { id, timeout_s: 20 });
    const killed = await c.call('kill_raider', { id });
    expect(killed).toMatchObject({ isError: false, json: { killed: 1, id } });
    expect((await waiting).json).toMatchObject({ id, status: 'interrupted' });
  });

  it("an unknown id is a tool error with the hall's message, for every tool that takes one", async () => {
    const c = await up();
    for (const tool of ['cancel_raider', 'kill_raider', 'raider_logs']) {
      const r = await c.call(tool, { id: 'nobody-1700000000' });
      expect(r.isError, tool).toBe(true);
      expect(r.text, tool).toBe('raider not found');
    }
    const w = await c.call('wait_for_raider', { id: 'nobody-1700000000', timeout_s: 1 });
    expect(w.isError).toBe(true);
    expect(w.text).toContain('raider not found: nobody-1700000000 is not running');
    const m = await c.call('wait_for_raider', { id: 'mabc123-0123456789ab', timeout_s: 1 });
    expect(m.isError).toBe(true);
    expect(m.text).toContain('neither waiting nor running');
  });

  it('a waiting or dropped mission id is a tool error that says so, with its code', async () => {
    const c = await up();
    await c.call('spawn_raider', { name: '1bjorn', mission: 'wait 30' });
    const queued = await c.call('spawn_raider', { name: '1bjorn', mission: 'answer later' });
    const missionId = String(queued.json!.mission_id);
    const killed = await c.call('kill_raider', { id: missionId });
    expect(killed).toMatchObject({ isError: true, json: { code: 'mission_waiting' } });
    expect(killed.text).toContain(`${missionId} is a mission waiting in the queue of 1bjorn (position 1)`);
    expect(await c.call('cancel_raider', { id: missionId })).toMatchObject({ isError: false, json: { dropped: 1 } });
    const waited = await c.call('wait_for_raider', { id: missionId, timeout_s: 1 });
    expect(waited).toMatchObject({ isError: true, json: { code: 'mission_dropped' } });
    expect(waited.text).toMatch(new RegExp(`^mission ${missionId} was dropped \\(cancelled\\) at `));
    const unknown = await c.call('cancel_raider', { id: 'nobody-1700000000' });
    expect(unknown).toMatchObject({ isError: true, text: 'raider not found', json: { error: 'raider not found', code: 'run_not_found' } });
  });

  it("a refused spawn is a tool error naming the reason; an unknown raider name is the hall's error", async () => {
    const c = await up();
    const refused = await c.call('spawn_raider', { name: 'ivar', mission: 'answer no' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^refused \(provider_not_stored\): .*acme/);
    expect(refused.json).toMatchObject({ status: 'refused', reason: 'provider_not_stored' });
    const bad = await c.call('spawn_raider', { name: '../etc', mission: 'answer x' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/name/);
  });

  it('arguments that do not fit the schema are a tool error; so is an unknown tool', async () => {
    const c = await up();
    const missing = await c.call('spawn_raider', { name: 'bjorn' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('mission');
    const tooLong = await c.call('wait_for_raider', { id: 'x-1', timeout_s: 99999 });
    expect(tooLong.isError).toBe(true);
    const unknown = await c.call('no_such_tool');
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('no_such_tool');
  });

  it('a queued mission: spawn_raider answers queued; wait_for_raider takes its mission_id', async () => {
    const c = await up();
    // The first runs until the second was seen waiting (no timing window to miss).
    const release = path.join(tempRoot('release-'), 'first');
    const first = await c.call('spawn_raider', { name: '1bjorn', mission: `until ${release}` });
    const second = await c.call('spawn_raider', { name: '1bjorn', mission: 'answer second' });
    expect(second.json).toMatchObject({ queued: 1, slot: '1bjorn', queue_depth: 1, mission_id: expect.any(String) });
    const missionId = second.json!.mission_id as string;
    const still = await c.call('wait_for_raider', { id: missionId, timeout_s: 0.1 });
    expect(still.json).toMatchObject({ status: 'still queued', mission_id: missionId });
    fs.writeFileSync(release, '');
    const done = await c.call('wait_for_raider', { id: missionId, timeout_s: 20 });
    expect(done.json).toMatchObject({
      type: 'raider.done',
      slot: '1bjorn',
      status: 'completed',
      response: 'second',
      mission_id: missionId,
    });
    expect(done.json!.id).not.toBe(first.json!.id);
  });

  it("reset_session: a numbered slot's binding is reset; an unknown binding is an error", async () => {
    const c = await up();
    const { json } = await c.call('spawn_raider', { name: '1bjorn', mission: 'answer one' });
    expect(json).toMatchObject({ binding: 'slot:1bjorn', session: expect.any(String) });
    await c.call('wait_for_raider', { id: json!.id, timeout_s: 20 });
    const reset = await c.call('reset_session', { binding: 'slot:1bjorn' });
    expect(reset).toMatchObject({ isError: false, json: { reset: 1, binding: 'slot:1bjorn', session: json!.session } });
    const none = await c.call('reset_session', { binding: 'slot:1nobody' });
    expect(none).toMatchObject({ isError: true, text: 'no session bound to slot:1nobody' });
  });

  it("send_telegram: the hall's error without Telegram; the arguments reach telegram_reply", async () => {
    const c = await up();
    const r = await c.call('send_telegram', { bot: 'ops', chat_id: 42, text: 'hi' });
    expect(r).toMatchObject({ isError: true, text: 'telegram not configured in .raider-hall.yml' });
    await opened.mcp!.close();
    await opened.hall!.stop();

    // A stand-in Telegram face answers telegram_reply.
    const seen: Array<Record<string, unknown>> = [];
    const telegram: HallAdapterFactory = () => ({
      name: 'telegram-stand-in',
      commands: {
        telegram_reply: (p) => {
          seen.push(p);
          return p.bot === 'ops' ? { ok: 1, message_ids: [7] } : { error: `unknown telegram bot "${String(p.bot)}"` };
        },
      },
      start: async () => {},
      stop: async () => {},
    });
    const c2 = await up({ adapters: [mcpAdapter, telegram] });
    const sent = await c2.call('send_telegram', { bot: 'ops', chat_id: '-100123', text: 'hello', message_thread_id: 5 });
    expect(sent).toMatchObject({ isError: false, json: { ok: 1, message_ids: [7] } });
    expect(seen[0]).toMatchObject({ cmd: 'telegram_reply', bot: 'ops', chat_id: '-100123', text: 'hello', message_thread_id: 5 });
    const unknown = await c2.call('send_telegram', { bot: 'nobot', chat_id: 1, text: 'x' });
    expect(unknown).toMatchObject({ isError: true, text: 'unknown telegram bot "nobot"' });
    const badChat = await c2.call('send_telegram', { bot: 'ops', chat_id: 'abc', text: 'x' });
    expect(badChat.isError).toBe(true);
    expect(seen).toHaveLength(2);
  });

  it('a pending wait answers when the hall stops; bad lines get JSON-RPC errors and the connection lives on', async () => {
    const c = await up();
    const raw = net.connect(mcpSocketPath(opened.hall!.root));
    let got = '';
    raw.on('data', (d: Buffer) => (got += d.toString()));
    raw.write('not json\n[1,2]\n');
    await eventually(() => expect(got.split('\n').filter(Boolean)).toHaveLength(2));
    const [parse, invalid] = got
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Json);
    expect(parse!.error.code).toBe(-32700);
    expect(invalid!.error.code).toBe(-32600);
    raw.destroy();
    expect((await c.call('hall_status')).isError).toBe(false);

    const { json } = await c.call('spawn_raider', { name: 'bjorn', mission: 'wait 30' });
    const listeners = opened.hall!.hall.bus.subscriberCount();
    const waiting = c.call('wait_for_raider', { id: json!.id, timeout_s: 60 });
    // The wait is pending in the hall once it listens on the bus.
    await eventually(() => expect(opened.hall!.hall.bus.subscriberCount()).toBe(listeners + 1));
    opened.hall!.hall.stop();
    const r = await waiting;
    expect(r).toMatchObject({ isError: true, text: expect.stringContaining('the hall is stopping') });
    await opened.hall!.hall.stopped;
    opened.hall = undefined;
  });
});
