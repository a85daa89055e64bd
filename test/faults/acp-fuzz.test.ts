/**
 * ACP fed malformed JSON-RPC (issue 9, bad input): garbage lines, requests
 * before initialize, wrong types in the params of every method, huge and odd
 * ids, unknown methods, notifications with nonsense. Every request gets
 * exactly one answer with its id, no handler fails with an internal error, and
 * the same connection then works: initialize, session/new, a prompt that
 * ends end_turn. The frames come from a seeded PRNG: FUZZ_SEED=N reproduces.
 */
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { acpAdapter } from '../../src/adapters/acp/acp-adapter.js';
import { eventually, startTestHall, type Json, type TestHall } from '../support/test-hall.js';
import { prng, type Rng } from '../support/prng.js';

const SEED = Number(process.env.FUZZ_SEED ?? 0xac9f);

let hall: TestHall | undefined;
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await hall?.stop();
  hall = undefined;
});

/** A raw newline-delimited JSON-RPC connection to the hall's ACP socket. */
class RawAcp {
  readonly responses = new Map<string, Json[]>();
  /** Responses whose id is null (garbage the agent could not read). */
  readonly nullIds: Json[] = [];
  readonly fromAgent: Json[] = [];
  readonly badLines: string[] = [];
  closed = false;
  private buffer = '';

  constructor(readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let nl = this.buffer.indexOf('\n'); nl >= 0; nl = this.buffer.indexOf('\n')) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        this.take(line);
      }
    });
    socket.on('close', () => (this.closed = true));
    socket.on('error', () => {});
  }

  static async open(root: string): Promise<RawAcp> {
    const socket = net.connect(path.join(root, '.raider-hall.acp.socket'));
    sockets.push(socket);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new RawAcp(socket);
  }

  private take(line: string): void {
    let msg: Json;
    try {
      msg = JSON.parse(line) as Json;
    } catch {
      this.badLines.push(line);
      return;
    }
    if (msg.jsonrpc !== '2.0') this.badLines.push(line);
    if ('method' in msg) {
      this.fromAgent.push(msg);
      // Answer what the agent asks (permissions): nobody here allows anything.
      if ('id' in msg) this.send({ jsonrpc: '2.0', id: msg.id, result: { outcome: { outcome: 'cancelled' } } });
      return;
    }
    if (msg.id === null || msg.id === undefined) this.nullIds.push(msg);
    else {
      const key = JSON.stringify(msg.id);
      this.responses.set(key, [...(this.responses.get(key) ?? []), msg]);
    }
  }

  line(text: string | Buffer): void {
    this.socket.write(text);
    this.socket.write('\n');
  }

  send(msg: Json): void {
    this.line(JSON.stringify(msg));
  }

  private counter = 0;
  request(method: string, params?: unknown): string {
    const id = `r${++this.counter}`;
    this.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    return id;
  }

  async answer(id: string, timeoutMs = 10_000): Promise<Json> {
    const key = JSON.stringify(id);
    return eventually(
      () => {
        const got = this.responses.get(key);
        expect(got, `an answer to ${id}`).toBeDefined();
        return got![0]!;
      },
      timeoutMs,
      5,
    );
  }
}

const INITIALIZE = { protocolVersion: 1, clientCapabilities: {} };

/** Values of every JSON type, and some that are odd for any field. */
function wrongValue(rng: Rng): unknown {
  return rng.pick<() => unknown>([
    () => null,
    () => rng.int(2000) - 1000,
    () => 1e308,
    () => -0.5,
    () => true,
    () => '',
    () => 'x'.repeat(rng.pick([1, 100, 70_000])),
    () => '../../etc/passwd',
    () => '\u0000\ud800',
    () => [],
    () => [1, 'a', null],
    () => ({}),
    () => ({ type: 'text', text: 5 }),
    () => ({ __proto__: { polluted: 1 }, constructor: 'x' }),
    () => JSON.parse('{"__proto__":{"x":1}}'),
    () => [{ type: rng.pick(['text', 'image', 'resource', 'resource_link', 'audio', 'nope', 5]) }],
    () => [{ type: 'text' }],
    () => [{ type: 'resource_link', uri: 5, name: [] }],
    () => [{ type: 'resource', resource: { uri: 'file:///x', text: 7 } }],
  ])();
}

/** The params an agent method takes, each field as the method wants it. */
function goodParams(method: string, sessionId: string, cwd: string): Record<string, unknown> {
  switch (method) {
    case 'initialize':
      return { ...INITIALIZE };
    case 'session/new':
      return { cwd, mcpServers: [] };
    case 'session/load':
    case 'session/resume':
      return { sessionId, cwd, mcpServers: [] };
    case 'session/list':
      return { cwd, cursor: '0' };
    case 'session/set_mode':
      return { sessionId, modeId: 'default' };
    case 'session/prompt':
      return { sessionId, prompt: [{ type: 'text', text: 'answer fuzz' }] };
    default:
      return { sessionId };
  }
}

const METHODS = [
  'initialize',
  'authenticate',
  'session/new',
  'session/load',
  'session/resume',
  'session/list',
  'session/close',
  'session/set_mode',
  'session/set_config_option',
  'session/set_model',
  'session/prompt',
  'session/cancel',
  'session/fork',
  'session/delete',
  'logout',
];

/** Params with something wrong: the whole of them, one field, or an extra field. */
function badParams(rng: Rng, method: string, sessionId: string, cwd: string): unknown {
  const good = goodParams(method, sessionId, cwd);
  const keys = Object.keys(good);
  switch (rng.int(5)) {
    case 0:
      return rng.pick([null, [], [good], 5, 'params', true, undefined]);
    case 1:
    case 2: {
      const key =
        keys.length > 0 && rng.chance(0.8) ? rng.pick(keys) : rng.pick(['sessionId', 'cwd', 'prompt', 'modeId', 'cursor', 'mcpServers']);
      return { ...good, [key]: wrongValue(rng) };
    }
    case 3: {
      const { [rng.pick(keys.length > 0 ? keys : ['x'])]: _dropped, ...rest } = good;
      return rest;
    }
    default:
      return { ...good, [rng.pick(['_meta', 'extra', '__proto__', 'raiderName', 'sessionId'])]: wrongValue(rng) };
  }
}

async function acpHall(): Promise<TestHall> {
  hall = await startTestHall({ config: 'raiders: { bjorn: {} }\ncancel_grace: 0.2\n', adapters: [acpAdapter] });
  return hall;
}

/** The connection still does real work: a new session whose prompt ends end_turn with the raider's answer. */
async function stillWorks(c: RawAcp, cwd: string): Promise<void> {
  const init = await c.answer(c.request('initialize', INITIALIZE));
  expect(init.result.protocolVersion).toBe(1);
  const created = await c.answer(c.request('session/new', { cwd, mcpServers: [] }));
  const sessionId = created.result.sessionId as string;
  const answered = await c.answer(
    c.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'answer still here' }] }),
    20_000,
  );
  expect(answered.result).toEqual({ stopReason: 'end_turn' });
  const chunks = c.fromAgent.filter(
    (m) => m.method === 'session/update' && m.params.sessionId === sessionId && m.params.update.sessionUpdate === 'agent_message_chunk',
  );
  expect(chunks.map((m) => m.params.update.content.text).join('')).toBe('still here');
}

describe('ACP fed malformed JSON-RPC', () => {
  it('answers requests before initialize with an error, then initializes on the same connection', async () => {
    const h = await acpHall();
    const c = await RawAcp.open(h.root);
    const early = [
      'session/new',
      'session/prompt',
      'session/load',
      'session/list',
      'session/cancel',
      'session/set_mode',
      'nope/nothing',
    ].map((m) => c.request(m, goodParams(m, '20260101-000000-abcd', h.root)));
    for (const id of early) {
      const a = await c.answer(id);
      expect(a.error?.code, JSON.stringify(a)).toBeOneOf([-32600, -32601]);
    }
    await stillWorks(c, h.root);
    expect(c.badLines).toEqual([]);
  });

  it(`answers every request with wrong types in the params of every method exactly once, never with an internal error (seed ${SEED})`, async () => {
    const h = await acpHall();
    const c = await RawAcp.open(h.root);
    await c.answer(c.request('initialize', INITIALIZE));
    const created = await c.answer(c.request('session/new', { cwd: h.root, mcpServers: [] }));
    const sessionId = created.result.sessionId as string;
    const rng = prng(SEED);
    const sent: Array<{ id: string; method: string; params: unknown }> = [];
    for (const method of METHODS) {
      for (let i = 0; i < 40; i++) {
        // Half of them name the live session, so the checks after the schema run too.
        const params = badParams(
          rng,
          method,
          rng.chance(0.5) ? sessionId : rng.pick(['', 'nope', '20260101-000000-abcd', sessionId]),
          rng.chance(0.7) ? h.root : '/',
        );
        sent.push({ id: c.request(method, params), method, params });
      }
    }
    await eventually(() => expect(sent.filter((s) => !c.responses.has(JSON.stringify(s.id))).map((s) => s.method)).toEqual([]), 30_000, 20);
    for (const s of sent) {
      const answers = c.responses.get(JSON.stringify(s.id))!;
      const what = `${s.method} ${JSON.stringify(s.params)?.slice(0, 200)}: ${JSON.stringify(answers).slice(0, 300)}`;
      expect(answers, what).toHaveLength(1);
      const code = answers[0]!.error?.code;
      expect(code === undefined || code !== -32603, what).toBe(true);
    }
    expect(c.badLines).toEqual([]);
    expect(c.nullIds).toEqual([]);
    await stillWorks(c, h.root);
    const codes = new Map<string, number>();
    for (const s of sent) {
      const a = c.responses.get(JSON.stringify(s.id))![0]!;
      const k = a.error ? String(a.error.code) : 'ok';
      codes.set(k, (codes.get(k) ?? 0) + 1);
    }
    console.log(
      `acp fuzz seed ${SEED}: ${sent.length} requests over ${METHODS.length} methods; answers ${[...codes].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    );
  }, 60_000);

  it('survives garbage lines, odd and huge ids, unknown methods and nonsense notifications', async () => {
    // The SDK says on stderr what it could not read; here that is the point, not news.
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    const h = await acpHall();
    const c = await RawAcp.open(h.root);
    await c.answer(c.request('initialize', INITIALIZE));
    const rng = prng(SEED ^ 0x5eed);
    // Lines the agent cannot read as a request: each gets one error with id null.
    const garbage: Array<string | Buffer> = [
      'not json',
      '{',
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":',
      '[]',
      '[1,2]',
      '42',
      '"str"',
      'null',
      '{"jsonrpc":"2.0"}',
      '{"jsonrpc":"1.0","id":"x","method":"initialize"}',
      '{"id":"y","method":"initialize"}',
      '{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}',
      '{"jsonrpc":"2.0","id":[1],"method":"initialize"}',
      '{"jsonrpc":"2.0","id":true,"method":"initialize"}',
      '{"jsonrpc":"2.0","id":"z","method":5}',
      Buffer.from([0xff, 0xfe, 0x7b, 0x80]),
      Buffer.from('{"jsonrpc":"2.0","id":"w","method":"initi\xc3'),
      `[${'['.repeat(5000)}${']'.repeat(5000)}]`,
      `{"jsonrpc":"2.0","id":"deep","method":"session/new","params":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
    ];
    for (let i = 0; i < 200; i++) {
      const bytes = Buffer.from(
        Array.from({ length: 1 + rng.int(80) }, () => {
          const b = rng.int(256);
          return b === 0x0a ? 0x20 : b;
        }),
      );
      garbage.push(bytes);
    }
    for (const g of garbage) c.line(g);
    // Notifications are never answered, whatever they carry.
    for (let i = 0; i < 50; i++)
      c.send({
        jsonrpc: '2.0',
        method: rng.pick(['session/cancel', 'nope/notify', 'session/update', '$/cancel_request', '']),
        params: wrongValue(rng),
      });
    // Unknown methods: -32601 each.
    const unknown = Array.from({ length: 50 }, (_, i) =>
      c.request(rng.pick(['nope', 'session/nope', '__proto__', 'constructor', 'toString', `x${i}`, 'session/', '']), wrongValue(rng)),
    );
    // Responses to requests the agent never made: ignored.
    for (let i = 0; i < 10; i++) c.send({ jsonrpc: '2.0', id: 9000 + i, result: wrongValue(rng) });
    c.send({ jsonrpc: '2.0', id: 9999, error: { code: 1, message: 'x' } });

    for (const id of unknown) {
      const a = await c.answer(id);
      expect(a.error?.code, JSON.stringify(a)).toBe(-32601);
    }
    // A request after all of it comes back: everything before it has been read.
    await c.answer(c.request('session/list', {}));
    const garbageAnswers = c.nullIds.length;
    expect(garbageAnswers).toBeGreaterThan(0);
    expect(c.nullIds.every((a) => [-32700, -32600].includes(a.error?.code))).toBe(true);

    // Huge and odd ids: one at a time, each answered once with the id as JSON reads it.
    const odd = ['123456789012345678901234567890', '9007199254740993', '1e308', '-1', '0', '1.5', '"\\u0000"', `"${'i'.repeat(10_000)}"`];
    for (const idText of odd) {
      const before = c.responses.size;
      const nulls = c.nullIds.length;
      c.line(`{"jsonrpc":"2.0","id":${idText},"method":"initialize","params":${JSON.stringify(INITIALIZE)}}`);
      await eventually(() => expect(c.responses.size + c.nullIds.length).toBeGreaterThan(before + nulls), 5000, 5);
      const key = JSON.stringify(JSON.parse(idText));
      expect(c.responses.get(key)?.[0]?.result?.protocolVersion, idText).toBe(1);
    }

    expect(c.closed).toBe(false);
    expect(c.badLines).toEqual([]);
    await stillWorks(c, h.root);
    expect(await h.request({ cmd: 'status' })).toMatchObject({ root: h.root });
    quiet.mockRestore();
  }, 60_000);

  it('a line over the 32 MiB message limit closes only that connection', async () => {
    const h = await acpHall();
    const big = await RawAcp.open(h.root);
    const other = await RawAcp.open(h.root);
    await other.answer(other.request('initialize', INITIALIZE));
    const chunk = Buffer.alloc(1 << 20, 0x61);
    for (let i = 0; i < 40 && !big.closed; i++) {
      if (!big.socket.write(chunk))
        await Promise.race([new Promise((r) => big.socket.once('drain', r)), new Promise((r) => setTimeout(r, 1000))]);
    }
    await eventually(() => expect(big.closed).toBe(true), 10_000);
    await stillWorks(other, h.root);
    const again = await RawAcp.open(h.root);
    await stillWorks(again, h.root);
  }, 30_000);
});
