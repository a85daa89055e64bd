import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { client, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { onLines } from '../../src/adapters/os/unix-socket.js';
import { eventually, RAIDER_BIN, hallEnv, tempRoot, type Json, type TestHall } from '../support/test-hall.js';
import { connectAcp, initialize, newSession, prompt, startAcpHall, updatesOf, type AcpTestClient } from './acp-support.js';

let hall: TestHall | undefined;
const clients: AcpTestClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await hall?.stop();
  hall = undefined;
});

async function open(config = 'raiders: { bjorn: {} }\ncancel_grace: 0.5\n', env: Record<string, string> = {}) {
  const started = await startAcpHall(config, env);
  hall = started.hall;
  const acp = await connectAcp({ port: started.port });
  clients.push(acp);
  await initialize(acp);
  return { hall: started.hall, acp, port: started.port, sessionId: await newSession(acp, hall.root) };
}

describe('ACP sessions', () => {
  it('a prompt waiting behind a busy session is answered after its own run; cancel answers the running one cancelled', async () => {
    const { acp, sessionId } = await open();
    const first = prompt(acp, sessionId, 'wait 30');
    await eventually(async () => expect((await hall!.request({ cmd: 'ps' })).raiders).toHaveLength(1));
    const second = prompt(acp, sessionId, 'answer second');
    await eventually(() =>
      expect(hall!.request({ cmd: 'status' })).resolves.toMatchObject({ binding_queues: { [`acp:${sessionId}`]: 1 } }),
    );
    await acp.conn.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await first).toEqual({ stopReason: 'cancelled' });
    expect(await second).toEqual({ stopReason: 'cancelled' });
    // The dropped prompt never ran.
    await eventually(async () => expect((await hall!.request({ cmd: 'status' })).running).toBe(0));
    expect(JSON.stringify(updatesOf(acp, sessionId))).not.toContain('second');
    const third = await prompt(acp, sessionId, 'answer third');
    expect(third).toEqual({ stopReason: 'end_turn' });
  });

  it('a waiting prompt whose mission another face cancels by its id is answered cancelled; the running one goes on', async () => {
    const { acp, sessionId } = await open();
    const first = prompt(acp, sessionId, 'wait 30');
    await eventually(async () => expect((await hall!.request({ cmd: 'ps' })).raiders).toHaveLength(1));
    const second = prompt(acp, sessionId, 'answer second');
    let waiting: Json = {};
    await eventually(async () => {
      waiting = await hall!.request({ cmd: 'queue' });
      expect(waiting).toMatchObject({ queues: [{ binding: `acp:${sessionId}`, missions: [{ mission: 'answer second' }] }] });
    });
    const missionId = waiting.queues[0].missions[0].mission_id;
    expect(await hall!.request({ cmd: 'cancel', id: missionId })).toMatchObject({ dropped: 1, mission_id: missionId });
    expect(await second).toEqual({ stopReason: 'cancelled' });
    expect((await hall!.request({ cmd: 'ps' })).raiders).toHaveLength(1);
    await acp.conn.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await first).toEqual({ stopReason: 'cancelled' });
  });

  it('a prompt behind a busy numbered slot waits, then runs and is answered', async () => {
    const { acp, sessionId } = await open('raiders: { bjorn: {} }\n');
    const tap = await hall!.events('raider.');
    const blocker = await hall!.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 0.5' });
    const s2 = await newSession(acp, hall!.root, '1bjorn');
    expect(sessionId).not.toBe(s2);
    const answer = await prompt(acp, s2, 'answer after the slot');
    expect(answer).toEqual({ stopReason: 'end_turn' });
    expect(updatesOf(acp, s2).at(-1)).toMatchObject({ content: { text: 'after the slot' } });
    // The order claimed: the prompt's run was spawned only after the blocker was done.
    const blockerDone = tap.all.findIndex((e) => e.type === 'raider.done' && e.id === blocker.id);
    const promptSpawned = tap.all.findIndex((e) => e.type === 'raider.spawned' && e.slot === '1bjorn' && e.id !== blocker.id);
    expect(blockerDone).toBeGreaterThanOrEqual(0);
    expect(promptSpawned).toBeGreaterThan(blockerDone);
    tap.close();
  });

  it('session/cancel as a request is answered {} (the Perl client waits for it)', async () => {
    const { acp, sessionId } = await open();
    expect(await acp.conn.agent.request('session/cancel', { sessionId })).toEqual({});
  });

  it('a refused raider entry ends the prompt with -32000 carrying the refusal', async () => {
    const { acp, sessionId } = await open('raiders: { ivar: { provider: acme } }\n', { HOME: tempRoot('home-') });
    await expect(prompt(acp, sessionId, 'answer x')).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining('not stored'),
    });
  });

  it('a refused prompt is answered from one source: the session hears nothing after it closed', async () => {
    const { hall: started, acp, sessionId } = await open('raiders: { ivar: { provider: acme } }\n', { HOME: tempRoot('home-') });
    const warn = vi.spyOn(console, 'warn');
    try {
      await expect(prompt(acp, sessionId, 'answer x')).rejects.toMatchObject({ code: -32000 });
      // The refusal came on the bus; the spawn reply that follows must not reach the closed session.
      await started.stop();
      hall = undefined;
      expect(warn.mock.calls.map((args) => String(args[0])).filter((line) => line.includes('stopped actor'))).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it('modes: session/new offers them, set_mode confirms with current_mode_update and passes --permission-mode', async () => {
    const { acp, sessionId } = await open('raiders: { bjorn: { permission_mode: plan } }\n');
    const s = (await acp.conn.agent.request('session/new', { cwd: hall!.root, mcpServers: [] })) as Json;
    expect(s.modes.currentModeId).toBe('plan');
    expect(s.modes.availableModes.map((m: Json) => m.id)).toEqual(['default', 'acceptEdits', 'plan', 'bypassPermissions']);
    expect(await acp.conn.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'acceptEdits' })).toEqual({});
    expect(updatesOf(acp, sessionId)).toContainEqual({ sessionUpdate: 'current_mode_update', currentModeId: 'acceptEdits' });
    await prompt(acp, sessionId, 'argv');
    const argv = JSON.parse(updatesOf(acp, sessionId).at(-1)!.content.text).argv as string[];
    expect(argv[argv.indexOf('--permission-mode') + 1]).toBe('acceptEdits');
    await expect(acp.conn.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'yolo' })).rejects.toMatchObject({
      code: -32602,
    });
  });

  it('list, load (replay) and resume bring a session back on a new connection; close forgets it', async () => {
    const { acp, port, sessionId } = await open();
    await prompt(acp, sessionId, 'answer remembered');
    acp.close();
    await eventually(async () => expect((await hall!.request({ cmd: 'status' })).acp.sessions).toBe(0));
    const again = await connectAcp({ port });
    clients.push(again);
    await initialize(again);
    const listed = (await again.conn.agent.request(methods.agent.session.list, {})) as Json;
    expect(listed.sessions).toContainEqual(expect.objectContaining({ sessionId, title: 'answer remembered' }));
    // What a raider journals in the session (the fake raider writes no journal of its own).
    const journal = path.join(hall!.root, '.raider/sessions', `${sessionId}.jsonl`);
    const line = (seq: number, type: string, fields: Json) => `${JSON.stringify({ v: 1, seq, time: 1, type, run: 'r1', ...fields })}\n`;
    appendFileSync(
      journal,
      line(2, 'message', { role: 'user', content: 'list the files' }) +
        line(3, 'tool.call', { call: 'c1', name: 'list_dir', arguments: { path: '.' }, status: 'dispatched' }) +
        line(4, 'tool.result', { call: 'c1', name: 'list_dir', status: 'succeeded', ok: true, size: 5, content: 'a.txt' }) +
        line(5, 'message', { role: 'assistant', content: 'one file' }),
    );
    await again.conn.agent.request(methods.agent.session.load, { sessionId, cwd: hall!.root, mcpServers: [] });
    expect(updatesOf(again, sessionId)).toEqual([
      { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'list the files' } },
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'r1:c1',
        title: 'list_dir .',
        kind: 'search',
        status: 'in_progress',
        rawInput: { path: '.' },
      },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'r1:c1',
        title: 'list_dir .',
        status: 'completed',
        content: [{ type: 'content', content: { type: 'text', text: 'a.txt' } }],
      },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'one file' } },
    ]);
    const argvAnswer = await prompt(again, sessionId, 'argv');
    expect(argvAnswer).toEqual({ stopReason: 'end_turn' });
    const argv = JSON.parse(updatesOf(again, sessionId).at(-1)!.content.text).argv as string[];
    expect(argv[argv.indexOf('--session') + 1]).toBe(sessionId);
    expect(await again.conn.agent.request(methods.agent.session.close, { sessionId })).toEqual({});
    await expect(prompt(again, sessionId, 'answer gone')).rejects.toMatchObject({ code: -32602 });
    await expect(
      again.conn.agent.request(methods.agent.session.resume, { sessionId: '20990101-000000-ffff', cwd: hall!.root }),
    ).rejects.toMatchObject({ code: -32002 });
  });

  it('disconnecting cancels the running run and forgets the binding; the journal stays', async () => {
    const { acp, sessionId } = await open();
    const tap = await hall!.events('raider.done');
    void prompt(acp, sessionId, 'wait 30').catch(() => {});
    await eventually(async () => expect((await hall!.request({ cmd: 'ps' })).raiders).toHaveLength(1));
    const [run] = (await hall!.request({ cmd: 'ps' })).raiders as Json[];
    const { events_path } = await hall!.request({ cmd: 'attach', id: run!.id });
    // Its signal handlers are in place once it has said run.started.
    await eventually(() => expect(readFileSync(events_path, 'utf8')).toContain('run.started'));
    acp.close();
    const done = await tap.waitFor(() => true);
    expect(done).toMatchObject({ status: 'cancelled', cancel_requested: true });
    await eventually(() =>
      expect(hall!.request({ cmd: 'session_reset', binding: `acp:${sessionId}` })).resolves.toEqual({
        error: `no session bound to acp:${sessionId}`,
      }),
    );
    expect(readFileSync(path.join(hall!.root, '.raider/sessions', `${sessionId}.jsonl`), 'utf8')).toContain('session.created');
  });

  it('garbage on the TCP port gets -32700 / -32600 and the connection survives', async () => {
    const { port } = await open();
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const lines: Json[] = [];
    socket.setEncoding('utf8');
    let buf = '';
    socket.on('data', (d: string) => {
      buf += d;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        lines.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
    });
    socket.write('not json\n[1]\n42\n{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}\n');
    await eventually(() => expect(lines.find((l) => l.id === 7)).toBeDefined());
    expect(lines.map((l) => l.error?.code ?? 'ok')).toEqual([-32700, -32600, -32600, 'ok']);
    socket.destroy();
  });
});

describe('raider acp --stdio', () => {
  it('answers initialize at once without a hall, fails requests clearly, then relays to the hall once it runs', async () => {
    const root = tempRoot();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(root, '.raider-hall.yml'), 'raiders: { bjorn: {} }\n');
    const child = spawn(process.execPath, [RAIDER_BIN, 'acp', '--stdio', root], { env: hallEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const updates: Json[] = [];
    const app = client({ name: 't' }).onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params as Json);
    });
    const conn = app.connect(
      ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>),
    );
    // No hall runs yet: the answer can only come from the bridge itself, which never waits for one.
    const init = await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init.protocolVersion).toBe(1);
    await expect(conn.agent.request('session/new', { cwd: root, mcpServers: [] })).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining('not running'),
    });
    const started = await startAcpHallAt(root);
    const sessionId = ((await conn.agent.request('session/new', { cwd: root, mcpServers: [] })) as Json).sessionId as string;
    const res = await conn.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'answer via the bridge' }],
    });
    expect(res).toEqual({ stopReason: 'end_turn' });
    expect(updates.map((u) => u.update.content?.text)).toContain('via the bridge');
    // The hall restarts: the bridge stays, and the session works again afterwards.
    await started.stop();
    hall = undefined;
    await expect(
      conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'answer x' }] }),
    ).rejects.toMatchObject({ code: -32000 });
    hall = await startAcpHallAt(root);
    const again = await conn.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'answer after restart' }],
    });
    expect(again).toEqual({ stopReason: 'end_turn' });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});

describe('raider acp --stdio with garbage', () => {
  it('answers a line that is no JSON -32700, and one that is no JSON-RPC message (not an object, an id that is an object) -32600', async () => {
    const root = tempRoot();
    const child = spawn(process.execPath, [RAIDER_BIN, 'acp', '--stdio', root], { env: hallEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: Json[] = [];
    onLines(child.stdout, (line) => {
      if (line.trim() !== '') lines.push(JSON.parse(line) as Json);
    });
    child.stdin.write('not json\n[1]\n{"jsonrpc":"2.0","id":{"x":1},"method":"initialize","params":{}}\n');
    child.stdin.write('{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n');
    await eventually(() => expect(lines).toHaveLength(4));
    expect(lines.map((l) => l.error?.code ?? l.id)).toEqual([-32700, -32600, -32600, 7]);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});

async function startAcpHallAt(root: string): Promise<TestHall> {
  const { startTestHall } = await import('../support/test-hall.js');
  const { acpAdapter } = await import('../../src/adapters/acp/acp-adapter.js');
  hall = await startTestHall({ root, adapters: [acpAdapter] });
  return hall;
}
