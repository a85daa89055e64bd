// The hall tools in-process against a stand-in control socket: one fresh
// connection and one command line per call, the reply as the result, the
// Telegram binding, and the transport errors the hall tools report.
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { hallBinding, hallTools } from '../../src/raider/tools/hall.js';
import { ProcessGroups } from '../../src/raider/tools/process-groups.js';
import type { Tool, ToolContext } from '../../src/raider/tools/tool.js';
import { cleanUp, makeProject } from './helpers.js';

afterAll(cleanUp);

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
});

type Responder = (payload: Record<string, unknown>) => string | undefined;

async function controlSocket(respond: Responder): Promise<{ path: string; payloads: Array<Record<string, unknown>>; connections: number }> {
  const path = join(makeProject(), 'hall.sock');
  const payloads: Array<Record<string, unknown>> = [];
  const state = { path, payloads, connections: 0 };
  const server = createServer((socket) => {
    state.connections++;
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      const frame = JSON.parse(buffer.slice(0, nl)) as { type: string; payload: Record<string, unknown> };
      expect(frame.type).toBe('command');
      payloads.push(frame.payload);
      const reply = respond(frame.payload);
      if (reply === undefined) socket.destroy();
      else socket.end(reply);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  return state;
}

const ctx = (): ToolContext => ({ root: '/', signal: new AbortController().signal, processes: new ProcessGroups(), env: {} });

function byName(tools: Tool[], name: string): Tool {
  return tools.find((t) => t.spec.name === name)!;
}

const REPLIES: Responder = (p) => {
  if (p.cmd === 'status') return '{"slots":["1b"],"running":1,"root":"/r"}\n';
  if (p.cmd === 'spawn') return `{"id":"${String(p.name)}-1","pid":7,"slot":"${String(p.name)}"}\n`;
  if (p.cmd === 'telegram_reply') return p.text === 'fail' ? '{"error":"bot ops not running"}\n' : '{"ok":1}\n';
  return '{"error":"unknown command"}\n';
};

describe('hall tools', () => {
  it('are there only under a hall, and know the Telegram chat of the run', () => {
    expect(hallBinding({})).toBeUndefined();
    expect(hallBinding({ RAIDER_HALL_SOCKET: '/s' })).toEqual({ socket: '/s' });
    expect(
      hallBinding({
        RAIDER_HALL_SOCKET: '/s',
        RAIDER_HALL_TELEGRAM_BOT: 'ops',
        RAIDER_HALL_TELEGRAM_CHAT_ID: '42',
        RAIDER_HALL_TELEGRAM_THREAD_ID: '7',
      }),
    ).toEqual({ socket: '/s', telegram: { bot: 'ops', chatId: '42', threadId: '7' } });
  });

  it('hall_status and hall_spawn send one command each, on a fresh connection, and return the reply as canonical JSON', async () => {
    const hall = await controlSocket(REPLIES);
    const tools = hallTools({ socket: hall.path });
    expect(await byName(tools, 'hall_status').run({}, ctx())).toEqual({ ok: true, content: '{"root":"/r","running":1,"slots":["1b"]}' });
    expect(await byName(tools, 'hall_spawn').run({ name: 'bjorn', mission: 'fix it' }, ctx())).toEqual({
      ok: true,
      content: '{"id":"bjorn-1","pid":7,"slot":"bjorn"}',
    });
    expect(hall.payloads).toEqual([{ cmd: 'status' }, { cmd: 'spawn', name: 'bjorn', mission: 'fix it' }]);
    expect(hall.connections).toBe(2);
  });

  it('a bound telegram_reply answers its own chat and thread only', async () => {
    const hall = await controlSocket(REPLIES);
    const reply = byName(hallTools({ socket: hall.path, telegram: { bot: 'ops', chatId: '42', threadId: '7' } }), 'telegram_reply');
    expect(reply.spec.parameters).toMatchObject({ required: ['text'] });
    expect(await reply.run({ text: 'hi' }, ctx())).toEqual({ ok: true, content: 'sent' });
    expect(await reply.run({ text: 'again', chat_id: 42, bot: 'ops' }, ctx())).toEqual({ ok: true, content: 'sent' });
    expect(await reply.run({ text: 'elsewhere', chat_id: 43 }, ctx())).toEqual({
      ok: false,
      content: 'Error: this run can only reply to ops chat 42',
    });
    expect(await reply.run({ text: 'other bot', bot: 'spam' }, ctx())).toEqual({
      ok: false,
      content: 'Error: this run can only reply to ops chat 42',
    });
    expect(await reply.run({ text: 'fail' }, ctx())).toEqual({ ok: false, content: 'Error: bot ops not running' });
    expect(hall.payloads.map((p) => [p.chat_id, p.message_thread_id, p.text])).toEqual([
      [42, 7, 'hi'],
      [42, 7, 'again'],
      [42, 7, 'fail'],
    ]);
  });

  it('an unbound telegram_reply needs bot and chat_id', async () => {
    const hall = await controlSocket(REPLIES);
    const reply = byName(hallTools({ socket: hall.path }), 'telegram_reply');
    expect(reply.spec.parameters).toMatchObject({ required: ['bot', 'chat_id', 'text'] });
    expect(await reply.run({ bot: 'ops', chat_id: -100, text: 'x', message_thread_id: 3 }, ctx())).toEqual({ ok: true, content: 'sent' });
    expect(hall.payloads).toEqual([{ cmd: 'telegram_reply', bot: 'ops', chat_id: -100, text: 'x', message_thread_id: 3 }]);
    await expect(reply.run({ bot: 'ops', text: 'x' }, ctx())).rejects.toThrow(/chat_id/);
  });

  it('transport problems are error results with the reference texts', async () => {
    const missing = join(makeProject(), 'none.sock');
    const status = (socket: string): Promise<unknown> => byName(hallTools({ socket }), 'hall_status').run({}, ctx());
    expect(await status(missing)).toEqual({
      ok: false,
      content: expect.stringMatching(new RegExp(`^Error: cannot connect to hall socket ${missing}: .*ENOENT`)),
    });
    const silent = await controlSocket(() => undefined);
    expect(await status(silent.path)).toEqual({ ok: false, content: 'Error: no response from hall' });
    const garbage = await controlSocket(() => 'not json\n');
    expect(await status(garbage.path)).toEqual({ ok: false, content: expect.stringMatching(/^Error: invalid hall response: /) });
  });
});
