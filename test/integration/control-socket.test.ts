/**
 * The wire contract of the control socket and the event bus (docs/protocol.md), checked with real sockets
 * against a real hall: framing, the exact error replies, the encoding of every
 * line (compact, sorted keys, UTF-8), the event envelope and prefix filters,
 * and what the hall does with subscribers that vanish or never read.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startHall } from '../../src/actors/hall-supervisor.js';
import { eventually, hallEnv, startTestHall, tempRoot, type Json, type TestHall } from '../support/test-hall.js';

const CONFIG = `
raiders:
  plain: {}
cancel_grace: 0.3
`;

const MIB = 1024 * 1024;
const NAME_HINT = "use 1 to 64 letters, digits, '_' or '-', starting with a letter or digit";

// Every test has a hall of its own, and most blocks run their tests concurrently:
// halls and connections are closed when the file is done, not after each test.
const halls: TestHall[] = [];
const open: Conn[] = [];
afterAll(async () => {
  for (const c of open.splice(0)) c.close();
  // A hall whose actor died never stops: do not wait for it forever.
  await Promise.all(halls.splice(0).map((h) => Promise.race([h.stop(), new Promise((r) => setTimeout(r, 2000))])));
});

/** A raw client: what it writes goes out as given, every line it gets is kept as text. */
class Conn {
  readonly lines: string[] = [];
  private cursor = 0;
  private buffer = '';
  private wake: Array<() => void> = [];
  closed = false;

  private constructor(readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let nl = this.buffer.indexOf('\n'); nl >= 0; nl = this.buffer.indexOf('\n')) {
        this.lines.push(this.buffer.slice(0, nl));
        this.buffer = this.buffer.slice(nl + 1);
      }
      this.notify();
    });
    socket.on('close', () => {
      this.closed = true;
      this.notify();
    });
    socket.on('error', () => {});
  }

  static open(socketPath: string): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(socketPath);
      socket.once('connect', () => {
        const conn = new Conn(socket);
        open.push(conn);
        resolve(conn);
      });
      socket.once('error', reject);
    });
  }

  private notify(): void {
    for (const w of this.wake.splice(0)) w();
  }

  send(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (err) => (err ? reject(err) : resolve())));
  }

  command(payload: Json): Promise<void> {
    return this.send(`${JSON.stringify({ type: 'command', payload })}\n`);
  }

  subscribe(filter?: unknown): Promise<void> {
    return this.send(`${JSON.stringify({ type: 'subscribe', payload: filter === undefined ? {} : { filter } })}\n`);
  }

  /** The next `n` lines (raw text), waiting for them. */
  async take(n: number, timeoutMs = 10_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.lines.length < this.cursor + n) {
      if (this.closed) throw new Error(`connection closed with ${this.lines.length - this.cursor}/${n} lines`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `timed out with ${this.lines.length - this.cursor}/${n} lines: ${this.lines.slice(this.cursor).join(' | ').slice(0, 300)}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const out = this.lines.slice(this.cursor, this.cursor + n);
    this.cursor += n;
    return out;
  }

  async replies(n: number, timeoutMs?: number): Promise<Json[]> {
    return (await this.take(n, timeoutMs)).map((l) => JSON.parse(l) as Json);
  }

  async reply(timeoutMs?: number): Promise<Json> {
    return (await this.replies(1, timeoutMs))[0]!;
  }

  /** Asserts that nothing more arrives for a while. */
  async quiet(ms = 200): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    expect(this.lines.slice(this.cursor)).toEqual([]);
  }

  /** Parsed lines that look like events (they carry seq). */
  events(): Json[] {
    return this.lines.map((l) => JSON.parse(l) as Json).filter((e) => typeof e.seq === 'number');
  }

  async waitEvent(predicate: (e: Json) => boolean, timeoutMs = 15_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events().find(predicate);
      if (found) return found;
      if (this.closed) throw new Error('connection closed before the event came');
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `event not seen; got ${this.events()
            .map((e) => e.type)
            .join(', ')}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

const frame = (payload: Json) => `${JSON.stringify({ type: 'command', payload })}\n`;
const invalidJson = (text: string) => {
  try {
    JSON.parse(text);
  } catch (err) {
    return `invalid JSON: ${(err as Error).message}`;
  }
  throw new Error(`${text} is valid JSON`);
};

/**
 * The canonical text of a JSON value: compact, object keys in sorted order
 * at every level. Built as a string, so JavaScript's own key order (integer
 * keys first) plays no part.
 */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function expectCanonical(line: string): void {
  expect(line).toBe(canonical(JSON.parse(line)));
}

async function started(config = CONFIG): Promise<TestHall> {
  const hall = await startTestHall({ config });
  halls.push(hall);
  return hall;
}

async function connect(h: TestHall): Promise<Conn> {
  return Conn.open(h.socket);
}

async function expectStatus(h: TestHall, running = 0): Promise<void> {
  const c = await connect(h);
  await c.command({ cmd: 'status' });
  const status = await c.reply();
  expect(status).toMatchObject({ running, root: h.root });
  c.close();
}

describe.concurrent('framing', () => {
  it('answers several frames of one write with as many replies, in order', async () => {
    const h = await started();
    const c = await connect(h);
    await c.send(
      frame({ cmd: 'status' }) + frame({ cmd: 'ps' }) + frame({ cmd: 'nope' }) + frame({ cmd: 'attach' }) + frame({ cmd: 'status' }),
    );
    const [a, b, d, e, f] = await c.replies(5);
    expect(a).toMatchObject({ running: 0, root: h.root, slots: [] });
    expect(b).toEqual({ raiders: [] });
    expect(d).toEqual({ error: 'unknown command: nope' });
    expect(e).toEqual({ error: 'attach requires an id' });
    expect(f).toMatchObject({ running: 0, root: h.root, slots: [] });
    await c.quiet();
  });

  it('keeps the order when a slow command (spawn) comes before quick ones', async () => {
    const h = await started();
    const c = await connect(h);
    await c.send(
      // It runs until it is killed below: `running: 1` cannot miss it.
      frame({ cmd: 'spawn', name: 'plain', mission: `until ${path.join(h.root, 'never')}` }) +
        frame({ cmd: 'ps' }) +
        frame({ cmd: 'kill' }) +
        frame({ cmd: 'status' }),
    );
    const [spawn, ps, kill, status] = await c.replies(4);
    expect(spawn).toMatchObject({ id: expect.stringMatching(/^plain-\d+$/), slot: 'plain', pid: expect.any(Number) });
    expect(ps).toHaveProperty('raiders');
    expect(kill).toEqual({ error: 'kill requires an id' });
    // Commands run as they come; only their replies wait for the ones before.
    expect(status).toMatchObject({ running: expect.any(Number), root: h.root });
    await c.send(frame({ cmd: 'status' }) + frame({ cmd: 'kill', id: spawn!.id }));
    const [after, killed] = await c.replies(2);
    expect(after).toMatchObject({ running: 1, slots: ['plain'] });
    expect(killed).toEqual({ killed: 1, id: spawn!.id });
  });

  it('answers a frame that arrives byte by byte, also when a character is split', async () => {
    const h = await started();
    const c = await connect(h);
    const bytes = Buffer.from(frame({ cmd: 'status' }) + frame({ cmd: 'spawn', name: 'ü日', mission: 'x' }), 'utf8');
    for (const byte of bytes) {
      await c.send(Buffer.from([byte]));
      await new Promise((r) => setImmediate(r));
    }
    const [status, spawn] = await c.replies(2);
    expect(status).toMatchObject({ running: 0, root: h.root });
    expect(spawn).toEqual({ error: `invalid raider name "ü日": ${NAME_HINT}` });
    await c.quiet();
  });

  it('waits for the newline: a frame without one is not answered yet', async () => {
    const h = await started();
    const c = await connect(h);
    await c.send(frame({ cmd: 'status' }).trimEnd());
    await c.quiet(250);
    await c.send('\n');
    expect(await c.reply()).toMatchObject({ running: 0 });
  });

  it('answers every frame of a client that shuts its side after writing (like nc -N)', async () => {
    const h = await started();
    const data =
      frame({ cmd: 'ps' }) +
      frame({ cmd: 'logs', id: 'plain-1' }) +
      frame({ cmd: 'spawn', name: '../x', mission: 'x' }) +
      frame({ cmd: 'spawn', name: 'plain', mission: 'answer half-closed' }) +
      frame({ cmd: 'status' });
    const text = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(h.socket);
      let got = '';
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(got);
      }, 5000);
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (got += d));
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(got);
      });
      socket.on('error', reject);
      socket.on('connect', () => socket.end(data));
    });
    const replies = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Json);
    expect(replies).toEqual([
      { raiders: [] },
      { error: 'raider not found', code: 'run_not_found' },
      { error: `invalid raider name "../x": ${NAME_HINT}` },
      expect.objectContaining({ slot: 'plain', id: expect.stringMatching(/^plain-\d+$/) }),
      expect.objectContaining({ root: h.root }),
    ]);
  });

  it('takes \\r\\n line ends', async () => {
    const h = await started();
    const c = await connect(h);
    await c.send(`${frame({ cmd: 'ps' }).trimEnd()}\r\n${frame({ cmd: 'nope' }).trimEnd()}\r\nnot json\r\n\r\n`);
    const replies = await c.replies(3);
    expect(replies).toEqual([{ raiders: [] }, { error: 'unknown command: nope' }, { error: invalidJson('not json') }]);
    await c.quiet();
  });

  it('ignores empty and blank lines without a reply', async () => {
    const h = await started();
    const c = await connect(h);
    await c.send(`\n\n\r\n   \n\t\n${frame({ cmd: 'ps' })}\n\n`);
    expect(await c.replies(1)).toEqual([{ raiders: [] }]);
    await c.quiet();
  });
});

describe.concurrent('error replies', () => {
  it('answers lines that are not JSON with invalid JSON: and the parser message', async () => {
    const h = await started();
    const c = await connect(h);
    const bad = [
      'not json',
      '{"type":',
      "{'type':'command'}",
      '[1,2',
      '{"type":"command",}',
      '{"type":"command"}}',
      'NaN',
      '"unterminated',
    ];
    await c.send(bad.map((l) => `${l}\n`).join(''));
    expect(await c.replies(bad.length)).toEqual(bad.map((l) => ({ error: invalidJson(l) })));
    await c.quiet();
    await expectStatus(h);
  });

  it('answers a JSON value that is not an object', async () => {
    const h = await started();
    const c = await connect(h);
    const values = ['[]', '[{"type":"command","payload":{"cmd":"status"}}]', '42', '-1.5e300', '"status"', 'null', 'true', 'false'];
    await c.send(values.map((l) => `${l}\n`).join(''));
    expect(await c.replies(values.length)).toEqual(
      values.map(() => ({ error: 'invalid frame: expected a JSON object with type and payload' })),
    );
    await expectStatus(h);
  });

  it('answers a payload that is not an object; a null payload counts as missing', async () => {
    const h = await started();
    const c = await connect(h);
    const payloads: unknown[] = [[], [{ cmd: 'status' }], 5, 'status', true];
    const lines = [
      ...payloads.map((payload) => JSON.stringify({ type: 'command', payload })),
      ...payloads.map((payload) => JSON.stringify({ type: 'subscribe', payload })),
      JSON.stringify({ type: 'command', payload: null }),
    ];
    await c.send(lines.map((l) => `${l}\n`).join(''));
    expect(await c.replies(lines.length)).toEqual([
      ...[...payloads, ...payloads].map(() => ({ error: 'invalid frame: payload must be a JSON object' })),
      { error: 'unknown command: ' },
    ]);
    await c.quiet();
    expect(h.hall.bus.subscriberCount()).toBe(0);
    await expectStatus(h);
  });

  it('answers an unknown or missing type with unknown message type: T', async () => {
    const h = await started();
    const c = await connect(h);
    const lines = [
      JSON.stringify({ type: 'hello', payload: {} }),
      JSON.stringify({ type: 'Command', payload: { cmd: 'status' } }),
      JSON.stringify({ type: 'commands', payload: { cmd: 'status' } }),
      JSON.stringify({ payload: { cmd: 'status' } }),
      '{}',
      JSON.stringify({ type: '', payload: {} }),
      JSON.stringify({ type: 'ü 日本 🚀' }),
    ];
    await c.send(lines.map((l) => `${l}\n`).join(''));
    expect(await c.replies(lines.length)).toEqual([
      { error: 'unknown message type: hello' },
      { error: 'unknown message type: Command' },
      { error: 'unknown message type: commands' },
      { error: 'unknown message type: ' },
      { error: 'unknown message type: ' },
      { error: 'unknown message type: ' },
      { error: 'unknown message type: ü 日本 🚀' },
    ]);
    await expectStatus(h);
  });

  it('answers an unknown or missing cmd with unknown command: X, also for names of Object.prototype', async () => {
    const h = await started();
    const c = await connect(h);
    const lines = [
      frame({ cmd: 'nope' }),
      frame({ cmd: 'STATUS' }),
      frame({ cmd: 'status ' }),
      frame({}),
      `${JSON.stringify({ type: 'command' })}\n`,
      frame({ cmd: '' }),
      frame({ cmd: 'toString' }),
      frame({ cmd: 'constructor' }),
      frame({ cmd: '__proto__' }),
      frame({ cmd: 'hasOwnProperty' }),
    ];
    await c.send(lines.join(''));
    expect(await c.replies(lines.length)).toEqual([
      { error: 'unknown command: nope' },
      { error: 'unknown command: STATUS' },
      { error: 'unknown command: status ' },
      { error: 'unknown command: ' },
      { error: 'unknown command: ' },
      { error: 'unknown command: ' },
      { error: 'unknown command: toString' },
      { error: 'unknown command: constructor' },
      { error: 'unknown command: __proto__' },
      { error: 'unknown command: hasOwnProperty' },
    ]);
    await expectStatus(h);
  });

  it('answers a line of invalid UTF-8 and reads on', async () => {
    const h = await started();
    const c = await connect(h);
    const wrap = (bytes: number[]) =>
      Buffer.concat([Buffer.from('{"type":"command","payload":{"cmd":"'), Buffer.from(bytes), Buffer.from('"}}\n')]);
    const bad = [
      [0xff], // never valid
      [0xfe, 0xfe],
      [0xc0, 0xaf], // overlong '/'
      [0xed, 0xa0, 0x80], // a lone high surrogate, UTF-8 encoded
      [0xed, 0xbf, 0xbf], // a lone low surrogate
      [0xe6, 0x97], // a truncated 3-byte character
      [0x80], // a continuation byte alone
      [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
    ];
    await c.send(Buffer.concat([...bad.map(wrap), Buffer.from([0xe6, 0x97, 0x0a]), Buffer.from(frame({ cmd: 'ps' }))]));
    expect(await c.replies(bad.length + 2)).toEqual([
      ...bad.map(() => ({ error: 'invalid UTF-8 in frame' })),
      { error: 'invalid UTF-8 in frame' },
      { raiders: [] },
    ]);
    await c.quiet();
    await expectStatus(h);
  });

  it('answers a NUL byte inside a frame as what it is (not JSON), and reads on', async () => {
    const h = await started();
    const c = await connect(h);
    const withNul = '{"type":"command","payload":{"cmd":"status"}}\u0000';
    await c.send(`${withNul}\n\u0000\n${frame({ cmd: 'ps' })}`);
    expect(await c.replies(3)).toEqual([{ error: invalidJson(withNul) }, { error: invalidJson('\u0000') }, { raiders: [] }]);
  });

  it('answers a line over 1 MiB once, and the connection goes on', async () => {
    const h = await started();
    const c = await connect(h);
    const tooLong = { error: `frame too long: a line may hold at most ${MIB} bytes` };
    // One write: a line just over the limit, then a status frame.
    await c.send(`${'x'.repeat(MIB + 1)}\n${frame({ cmd: 'status' })}`);
    const [first, status] = await c.replies(2);
    expect(first).toEqual(tooLong);
    expect(status).toMatchObject({ running: 0, root: h.root });
    // Many writes: a 3 MiB line that is otherwise a valid frame, in 64 KiB pieces.
    const huge = Buffer.from(`${JSON.stringify({ type: 'command', payload: { cmd: 'status', pad: 'p'.repeat(3 * MIB) } })}\n`);
    for (let at = 0; at < huge.length; at += 64 * 1024) await c.send(huge.subarray(at, at + 64 * 1024));
    await c.send(frame({ cmd: 'ps' }));
    expect(await c.replies(2)).toEqual([tooLong, { raiders: [] }]);
    await c.quiet();
    await expectStatus(h);
  });

  it('takes a line of exactly 1 MiB and refuses one byte more', async () => {
    const h = await started();
    const c = await connect(h);
    const padded = (size: number) => {
      const base = JSON.stringify({ type: 'command', payload: { cmd: 'ps', pad: '' } });
      const line = base.replace('"pad":""', `"pad":"${'p'.repeat(size - base.length)}"`);
      expect(Buffer.byteLength(line)).toBe(size);
      return `${line}\n`;
    };
    await c.send(padded(MIB) + padded(MIB + 1) + frame({ cmd: 'ps' }));
    expect(await c.replies(3)).toEqual([
      { raiders: [] },
      { error: `frame too long: a line may hold at most ${MIB} bytes` },
      { raiders: [] },
    ]);
  });

  it('refuses raider names that are not safe as file names', async () => {
    const h = await started();
    const c = await connect(h);
    const unsafe = ['../x', 'a/b', '/abs', '..', '.hidden', '-x', '_x', 'a b', 'a.b', 'x\n', 'ü', 'a'.repeat(65), 'a\u0000b'];
    for (const name of unsafe) await c.command({ cmd: 'spawn', name, mission: 'answer no' });
    await c.command({ cmd: 'spawn', name: '', mission: 'answer no' });
    await c.command({ cmd: 'spawn', mission: 'answer no' });
    await c.command({ cmd: 'spawn', name: 7, mission: 'answer no' });
    await c.command({ cmd: 'spawn', name: ['plain'], mission: 'answer no' });
    await c.command({ cmd: 'spawn', name: { name: 'plain' }, mission: 'answer no' });
    await c.command({ cmd: 'spawn', name: 'plain', mission: 5 });
    await c.command({ cmd: 'spawn', name: 'plain', mission: ['answer no'] });
    await c.command({ cmd: 'spawn', name: 'plain', mission: 'answer no', binding: '' });
    await c.command({ cmd: 'spawn', name: 'plain', mission: 'answer no', binding: 'a b' });
    await c.command({ cmd: 'spawn', name: 'plain', mission: 'answer no', binding: 42 });
    const replies = await c.replies(unsafe.length + 10);
    expect(replies).toEqual([
      ...unsafe.map((name) => ({ error: `invalid raider name ${JSON.stringify(name)}: ${NAME_HINT}` })),
      { error: 'spawn requires a raider name' },
      { error: 'spawn requires a raider name' },
      { error: 'spawn requires a raider name' },
      { error: 'spawn requires a raider name' },
      { error: 'spawn requires a raider name' },
      { error: 'spawn requires a mission (a string)' },
      { error: 'spawn requires a mission (a string)' },
      { error: 'a binding must be a non-empty string' },
      { error: `invalid binding "a b": no whitespace or control characters, at most 256 characters` },
      { error: 'a binding must be a non-empty string' },
    ]);
    await expectStatus(h);
    // Nothing was started or written for them.
    expect(fs.readdirSync(path.join(h.root, '.raider-hall', 'logs'))).toEqual([]);
    expect(fs.existsSync(path.join(h.root, 'x.log'))).toBe(false);
  });

  it('takes a 64-character name (the longest allowed)', async () => {
    const h = await started();
    const c = await connect(h);
    await c.subscribe('raider.done');
    const name = `Z${'9_-'.repeat(21)}`;
    expect(name).toHaveLength(64);
    await c.command({ cmd: 'spawn', name, mission: 'answer long name' });
    const reply = await c.reply();
    expect(reply).toMatchObject({ slot: name, id: expect.stringMatching(new RegExp(`^${name}-\\d+$`)) });
    const done = await c.waitEvent((e) => e.type === 'raider.done');
    expect(done).toMatchObject({ id: reply.id, status: 'completed', response: 'long name' });
  });

  it('still answers status after all kinds of bad frames on one connection', async () => {
    const h = await started();
    const c = await connect(h);
    const bad = Buffer.concat([
      Buffer.from('garbage\n[1]\n7\n{"type":"command","payload":"x"}\n{"type":"x"}\n{"type":"command","payload":{"cmd":"x"}}\n'),
      Buffer.from([0xff, 0x0a]),
      Buffer.from(`${'y'.repeat(MIB + 5)}\n`),
      Buffer.from(frame({ cmd: 'spawn', name: '../x', mission: 'm' })),
      Buffer.from(frame({ cmd: 'status' })),
    ]);
    await c.send(bad);
    const replies = await c.replies(10);
    expect(replies.slice(0, 9).every((r) => typeof r.error === 'string')).toBe(true);
    expect(replies[9]).toMatchObject({ running: 0, root: h.root, slots: [] });
    await expectStatus(h);
  });
});

describe.concurrent('encoding', () => {
  it('writes every reply as one compact line with sorted keys at every level', async () => {
    const h = await started();
    const c = await connect(h);
    await c.command({ cmd: 'spawn', name: 'zeta', mission: 'wait 5' });
    await c.command({ cmd: 'spawn', name: '1alpha', mission: 'wait 5' });
    await c.command({ cmd: 'spawn', name: '1alpha', mission: 'wait 5' });
    const [z, a, queued] = await c.replies(3);
    expect(queued).toMatchObject({ queued: 1, slot: '1alpha', queue_depth: 1 });
    await c.send(
      [
        frame({ cmd: 'status' }),
        frame({ cmd: 'ps' }),
        frame({ cmd: 'attach', id: a!.id }),
        frame({ cmd: 'logs', id: z!.id }),
        frame({ cmd: 'nope' }),
        'bad\n',
      ].join(''),
    );
    const lines = await c.take(6);
    const status = JSON.parse(lines[0]!) as Json;
    // Nested objects and arrays of objects are there to be checked.
    expect(status.runs).toHaveLength(2);
    expect(status.queues).toMatchObject({ '1alpha': 1 });
    expect((JSON.parse(lines[1]!) as Json).raiders).toHaveLength(2);
    for (const line of [...c.lines]) expectCanonical(line);
    await c.command({ cmd: 'kill', id: z!.id });
    await c.command({ cmd: 'kill', id: a!.id });
    for (const line of await c.take(2)) expectCanonical(line);
  });

  it('writes every event as one compact line with sorted keys', async () => {
    const h = await started();
    const sub = await connect(h);
    await sub.subscribe('');
    const c = await connect(h);
    await c.command({ cmd: 'spawn', name: '1bee', mission: 'answer one' });
    await c.command({ cmd: 'spawn', name: '1bee', mission: 'answer two' });
    await c.command({ cmd: 'spawn', name: 'plain', mission: 'fail badly' });
    const [, second] = await c.replies(3);
    expect(second).toMatchObject({ queued: 1 });
    await eventually(() => expect(sub.events().filter((e) => e.type === 'raider.done')).toHaveLength(3));
    const types = new Set(sub.events().map((e) => e.type));
    for (const t of ['raider.spawned', 'raider.queued', 'raider.done', 'session.bound']) expect(types).toContain(t);
    for (const line of sub.lines) expectCanonical(line);
  });

  it('carries UTF-8 both ways intact', async () => {
    const h = await started();
    const c = await connect(h);
    const text = 'ü 日本 🚀';
    await c.subscribe('raider.done');
    await c.send(Buffer.from(frame({ cmd: 'spawn', name: 'plain', mission: `answer ${text}` }), 'utf8'));
    const reply = await c.reply();
    const done = await c.waitEvent((e) => e.type === 'raider.done');
    expect(done).toMatchObject({ id: reply.id, status: 'completed', response: text });
    // Sent as UTF-8, not as \u escapes.
    const line = c.lines.find((l) => l.includes('"raider.done"'))!;
    expect(line).toContain(`"response":"${text}"`);
    const other = await connect(h);
    await other.command({ cmd: 'logs', id: reply.id });
    const logs = (await other.take(1))[0]!;
    expect(logs).toContain(`completed: ${text}`);
    expect(JSON.parse(logs)).toEqual({ log: `[hall] raider ${reply.id} started\n[hall] raider ${reply.id} completed: ${text}\n` });
  });

  it('creates the socket file with mode 0600', async () => {
    const h = await started();
    const stat = fs.statSync(h.socket);
    expect(stat.isSocket()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(h.socket).toBe(path.join(h.root, '.raider-hall.socket'));
  });
});

describe('event bus', () => {
  it('gives every event the version 1 envelope, seq going up by one per hall process', async () => {
    const h = await started();
    const sub = await connect(h);
    await sub.send(`${JSON.stringify({ type: 'subscribe', payload: { filter: '' } })}\n`);
    const c = await connect(h);
    // A reply on the subscriber's own connection shows the subscription is in place.
    await sub.command({ cmd: 'ps' });
    expect(await sub.reply()).toEqual({ raiders: [] });
    const before = Date.now() / 1000;
    for (let i = 0; i < 4; i++) await c.command({ cmd: 'spawn', name: i % 2 ? '1odd' : 'even', mission: `answer ${i}` });
    await c.replies(4);
    await eventually(() => expect(sub.events().filter((e) => e.type === 'raider.done')).toHaveLength(4));
    const after = Date.now() / 1000;
    const events = sub.events();
    expect(events.length).toBeGreaterThanOrEqual(9);
    const first = events[0]!.seq as number;
    // hall.started came before the subscription.
    expect(first).toBeGreaterThan(1);
    events.forEach((e, i) => {
      expect(e.version).toBe(1);
      expect(typeof e.type).toBe('string');
      expect(e.seq).toBe(first + i);
      expect(typeof e.time).toBe('number');
      expect(e.time).toBeGreaterThanOrEqual(before - 0.01);
      expect(e.time).toBeLessThanOrEqual(after + 0.01);
      expect(e.ts).toBe(Math.floor(e.time));
      expect(Number.isInteger(e.ts)).toBe(true);
    });
    // time is sub-second: not all of them whole seconds.
    expect(events.some((e) => !Number.isInteger(e.time))).toBe(true);
  });

  it('emits hall.started (seq 1) once the boot is done, and hall.stopping to subscribers', async () => {
    const root = tempRoot();
    const socketPath = path.join(root, '.raider-hall.socket');
    // The boot comes before the socket answers (nothing may overtake what a previous hall left
    // waiting), so hall.started reaches in-process listeners such as the foreground view.
    const seen: Json[] = [];
    const running = await startHall({ root, env: hallEnv(), log: () => {}, onEvent: (e) => seen.push(e) });
    const sub = await Conn.open(socketPath);
    try {
      await sub.subscribe('hall.');
      // A reply on the same connection: the subscription before it is in place.
      await sub.command({ cmd: 'ps' });
      await sub.reply();
      expect(seen[0]).toEqual({
        version: 1,
        type: 'hall.started',
        seq: 1,
        root: running.paths.root,
        time: expect.any(Number),
        ts: Math.floor(seen[0]!.time as number),
      });
      running.stop();
      const stopping = await sub.waitEvent((e) => e.type === 'hall.stopping', 5000);
      expect(Object.keys(stopping).sort()).toEqual(['seq', 'time', 'ts', 'type', 'version']);
      expect(stopping.seq).toBeGreaterThan(1);
      await running.stopped;
      await eventually(() => expect(sub.closed).toBe(true), 5000);
      expect(fs.existsSync(socketPath)).toBe(false);
    } finally {
      running.stop();
      await running.stopped;
    }
  });
  it('filters by type prefix; "" and a missing filter get everything', async () => {
    const h = await started();
    const filters: Array<[string, unknown]> = [
      ['all', ''],
      ['missing', undefined],
      ['null', null],
      ['raider.', 'raider.'],
      ['raider.done', 'raider.done'],
      ['raider.q', 'raider.q'],
      ['session.', 'session.'],
      ['none', 'no.such.type'],
      ['exact-type-plus', 'raider.done.'],
    ];
    const subs = new Map<string, Conn>();
    for (const [label, filter] of filters) {
      const s = await connect(h);
      if (label === 'missing') await s.send(`${JSON.stringify({ type: 'subscribe' })}\n`);
      else if (label === 'null') await s.send(`${JSON.stringify({ type: 'subscribe', payload: { filter: null } })}\n`);
      else await s.subscribe(filter);
      // Each subscription is in place once a later frame of its connection is answered.
      await s.command({ cmd: 'ps' });
      await s.take(1);
      subs.set(label, s);
    }
    expect(h.hall.bus.subscriberCount()).toBe(filters.length);
    const c = await connect(h);
    // raider.spawned comes first and matches no 'raider.done' filter: that subscriber must stay.
    await c.command({ cmd: 'spawn', name: 'plain', mission: 'answer a' });
    // 1q runs until the second has queued behind it (no timing window to miss).
    const release = path.join(h.root, 'release-1q');
    await c.command({ cmd: 'spawn', name: '1q', mission: `until ${release}` });
    await c.command({ cmd: 'spawn', name: '1q', mission: 'answer queued' });
    await c.replies(3);
    fs.writeFileSync(release, '');
    const all = subs.get('all')!;
    // The third raider.done is the last event of the three runs.
    await eventually(() => expect(all.events().filter((e) => e.type === 'raider.done')).toHaveLength(3));
    const everything = all.events();
    const types = everything.map((e) => e.type as string);
    expect(new Set(types)).toEqual(new Set(['raider.spawned', 'raider.queued', 'raider.done', 'session.bound']));
    const seqs = (label: string) =>
      subs
        .get(label)!
        .events()
        .map((e) => e.seq);
    const expected = (prefix: string) => everything.filter((e) => (e.type as string).startsWith(prefix)).map((e) => e.seq);
    // Each subscriber's socket delivers in its own time: wait for each to have what it should.
    await eventually(() => {
      expect(seqs('missing')).toEqual(expected(''));
      expect(seqs('null')).toEqual(expected(''));
      expect(seqs('raider.')).toEqual(expected('raider.'));
      expect(seqs('raider.done')).toEqual(expected('raider.done'));
      expect(seqs('raider.q')).toEqual(expected('raider.queued'));
      expect(seqs('session.')).toEqual(expected('session.'));
    });
    expect(seqs('raider.done')).toHaveLength(3);
    expect(seqs('raider.q')).toHaveLength(1);
    expect(seqs('none')).toEqual([]);
    expect(seqs('exact-type-plus')).toEqual([]);
    // Nobody was dropped for not matching.
    expect(h.hall.bus.subscriberCount()).toBe(filters.length);
    // The same event is the same line for every subscriber.
    const doneLine = all.lines.find((l) => l.includes('"raider.done"'))!;
    expect(subs.get('raider.done')!.lines).toContain(doneLine);
  });

  it('refuses a filter that is not a string', async () => {
    const h = await started();
    const c = await connect(h);
    for (const filter of [5, ['raider.'], { p: 'x' }, true]) await c.subscribe(filter);
    expect(await c.replies(4)).toEqual(Array(4).fill({ error: 'subscribe: filter must be a string' }));
    expect(h.hall.bus.subscriberCount()).toBe(0);
  });

  it('lets one connection subscribe and send commands', async () => {
    const h = await started();
    const c = await connect(h);
    await c.send(
      `${JSON.stringify({ type: 'subscribe', payload: { filter: 'raider.' } })}\n${frame({ cmd: 'spawn', name: 'plain', mission: 'answer both' })}`,
    );
    const done = await c.waitEvent((e) => e.type === 'raider.done');
    expect(done).toMatchObject({ status: 'completed', response: 'both' });
    // Events and replies share the connection in no promised order: a reply
    // waits for its fdatasync, which on a loaded disk can take longer than
    // this raider's whole run.
    const replies = () => c.lines.map((l) => JSON.parse(l) as Json).filter((x) => typeof x.seq !== 'number');
    await eventually(() => expect(replies()).toHaveLength(1));
    expect(replies()[0]).toMatchObject({ id: done.id, slot: 'plain' });
    expect(c.events().map((e) => e.type)).toEqual(['raider.spawned', 'raider.done']);
    const lines = c.lines.length;
    await c.command({ cmd: 'status' });
    await eventually(() => expect(c.lines.length).toBe(lines + 1));
    expect(JSON.parse(c.lines.at(-1)!)).toMatchObject({ running: 0, root: h.root });
  });

  it('goes on delivering when subscribers disconnect', async () => {
    const h = await started();
    const keep: Conn[] = [];
    const gone: Conn[] = [];
    for (let i = 0; i < 6; i++) {
      const s = await connect(h);
      await s.subscribe(i % 2 ? 'raider.' : '');
      await s.command({ cmd: 'ps' });
      await s.take(1);
      (i < 3 ? gone : keep).push(s);
    }
    expect(h.hall.bus.subscriberCount()).toBe(6);
    const c = await connect(h);
    await c.command({ cmd: 'spawn', name: 'plain', mission: 'wait 0.3' });
    const first = await c.reply();
    // Mid-run: one is destroyed, one closes after ending its side, one after writing a partial frame.
    // (A subscriber that only half-closes keeps getting its events.)
    gone[0]!.socket.destroy();
    gone[1]!.socket.end(() => gone[1]!.socket.destroy());
    gone[2]!.socket.end('{"type":"command","payl', () => gone[2]!.socket.destroy());
    await eventually(() => expect(h.hall.bus.subscriberCount()).toBe(3));
    await c.command({ cmd: 'spawn', name: 'plain', mission: 'answer after' });
    const second = await c.reply();
    for (const s of keep) {
      await s.waitEvent((e) => e.type === 'raider.done' && e.id === first.id);
      await s.waitEvent((e) => e.type === 'raider.done' && e.id === second.id);
    }
    await expectStatus(h);
    expect(h.logs.filter((l) => /subscriber/.test(l))).toEqual([]);
  });

  it('drops a subscriber that never reads, and keeps answering the others', async () => {
    const h = await started();
    // The slow one: subscribes to everything and stops reading.
    const slow = await connect(h);
    await slow.subscribe('');
    await slow.command({ cmd: 'ps' });
    await slow.take(1);
    slow.socket.pause();
    const watcher = await connect(h);
    await watcher.subscribe('raider.done');
    await watcher.command({ cmd: 'ps' });
    await watcher.take(1);

    // Each raider.done carries 99,000 control characters (a mission is at most
    // 100,000 bytes), about 600 kB as JSON (\u0001 each); 8 MiB unread is the limit.
    const response = '\u0001'.repeat(99_000);
    const c = await connect(h);
    const latencies: number[] = [];
    const probe = await connect(h);
    let runs = 0;
    // Bounded by runs, not by time (a loaded machine is slow, not wrong): about 14 of these
    // fill the 8 MiB and the socket buffers hold a few more; 120 would be over 70 MB unread.
    while (!h.logs.some((l) => l.includes('dropped')) && runs < 120) {
      const batch = 6;
      for (let i = 0; i < batch; i++) await c.command({ cmd: 'spawn', name: `w${i}`, mission: `answer ${response}` });
      const replies = await c.replies(batch);
      for (const r of replies) expect(r).toMatchObject({ id: expect.any(String) });
      runs += batch;
      const t0 = Date.now();
      await probe.command({ cmd: 'status' });
      expect(await probe.reply()).toHaveProperty('running');
      latencies.push(Date.now() - t0);
      await eventually(() => expect(watcher.events().length).toBe(runs), 10_000);
    }
    expect(h.hall.bus.subscriberCount()).toBe(1);
    // The hall closed it: once it reads again it gets what was sent, then the end.
    slow.socket.resume();
    await eventually(() => expect(slow.closed).toBe(true), 5000);
    const missed = slow.events();
    expect(missed.length).toBeGreaterThan(0);
    for (const [i, e] of missed.entries()) expect(e.seq).toBe(missed[0]!.seq + i);
    expect(missed.filter((e) => e.type === 'raider.done').length).toBeLessThan(runs);
    // The hall answered the others quickly all along.
    expect(Math.max(...latencies)).toBeLessThan(1000);
    // The one that reads got every raider.done, whole.
    expect(watcher.events()).toHaveLength(runs);
    expect(watcher.events().every((e) => e.response === response)).toBe(true);
    expect(runs).toBeGreaterThanOrEqual(12);
    console.log(`slow subscriber dropped after ${runs} runs; status answered in at most ${Math.max(...latencies)} ms meanwhile`);
    await expectStatus(h);
    // The drop is logged once, with its reason.
    expect(h.logs.filter((l) => l.includes('dropped'))).toEqual([`event subscriber dropped: more than ${8 * MIB} bytes unread`]);
  }, 90_000);
});

describe.concurrent('names that are keys of Object.prototype', () => {
  it('answers attach with raider not found for them', async () => {
    const h = await started();
    const c = await connect(h);
    const ids = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
    for (const id of ids) await c.command({ cmd: 'attach', id });
    expect(await c.replies(ids.length)).toEqual(ids.map(() => ({ error: 'raider not found', code: 'run_not_found' })));
  });

  it('answers session_reset with no session bound for them', async () => {
    const h = await started();
    const c = await connect(h);
    await c.subscribe('session.');
    const bindings = ['constructor', '__proto__', 'toString'];
    for (const binding of bindings) await c.command({ cmd: 'session_reset', binding });
    expect(await c.replies(bindings.length)).toEqual(bindings.map((b) => ({ error: `no session bound to ${b}` })));
    await c.quiet();
  });

  it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty'])(
    'runs a raider named %s like any other (the hall does not die)',
    async (name) => {
      const h = await started();
      const c = await connect(h);
      await c.subscribe('raider.done');
      await c.command({ cmd: 'spawn', name, mission: 'answer proto' });
      const reply = await c.reply(3000);
      expect(reply).toMatchObject({ slot: name, id: expect.stringMatching(new RegExp(`^${name}-\\d+$`)) });
      const done = await c.waitEvent((e) => e.type === 'raider.done', 5000);
      expect(done).toMatchObject({ id: reply.id, status: 'completed', response: 'proto' });
      await expectStatus(h);
    },
  );

  it.each(['__proto__', 'constructor'])('runs a mission with binding %s (the hall does not die)', async (binding) => {
    const h = await started();
    const c = await connect(h);
    await c.subscribe('raider.done');
    await c.command({ cmd: 'spawn', name: 'plain', binding, mission: 'answer bound' });
    const reply = await c.reply(3000);
    expect(reply).toMatchObject({ slot: 'plain', binding });
    const done = await c.waitEvent((e) => e.type === 'raider.done', 5000);
    expect(done).toMatchObject({ id: reply.id, status: 'completed', response: 'bound', binding });
    await expectStatus(h);
  });
});
