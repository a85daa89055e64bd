/**
 * The hall never dies of a frame: 10,000 random and malformed frames over ten
 * concurrent connections, cut into random pieces. Every complete, non-blank
 * line gets exactly one reply on its connection, in order, and each reply is
 * the one the wire contract says.
 *
 * The frames come from a seeded PRNG: FUZZ_SEED=N reproduces a run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestHall, type Json, type TestHall } from '../support/test-hall.js';
import { prng, type Rng } from '../support/prng.js';
import { expectedReply, isObject, MAX_FRAME_BYTES, WouldAct, type Expected } from '../support/control-frame-oracle.js';
import { fuzzConnection } from '../support/fuzz-connection.js';
import { ErrorReply } from '../../src/protocol/replies.js';

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed_2026);
const CONNECTIONS = 10;
const FRAMES_PER_CONNECTION = 1000;
/** Keys of Object.prototype are left to control-socket.test.ts, which has the details. */
const PROTO_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));

let hall: TestHall | undefined;
afterEach(async () => {
  if (hall) await Promise.race([hall.stop(), new Promise((r) => setTimeout(r, 3000))]);
  hall = undefined;
});

// ------------------------------------------------------------ the generators

const LONE_SURROGATES = [
  [0xed, 0xa0, 0x80],
  [0xed, 0xaf, 0xbf],
  [0xed, 0xb0, 0x80],
  [0xed, 0xbf, 0xbf],
];
const HUGE_NUMBERS = [
  '1e400',
  '-1e400',
  '123456789012345678901234567890',
  '1e-400',
  '-0',
  '9007199254740993',
  '0.1e999999999',
  `1${'0'.repeat(5000)}`,
];
const ODD_STRINGS = [
  '',
  ' ',
  'status',
  'STATUS',
  'status ',
  'command',
  'subscribe ',
  'ü 日本 🚀',
  '\u0000',
  '\ud800',
  '\udfff',
  '\u2028\u2029',
  '../x',
  'a/b',
  '..',
  '.hidden',
  'x'.repeat(65),
  'plain-1712345678',
  'plain-1712345678.2',
  '1bjorn-1712345678',
  '../../etc/passwd-1',
  '%s%n',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: '${x}' is a hostile literal string the fuzzer sends on purpose
  '${x}',
  '\t\r',
  'a b',
  '-x',
];
const COMMANDS = ['spawn', 'ps', 'status', 'attach', 'logs', 'kill', 'cancel', 'session_reset', 'telegram_reply'];

function randomString(rng: Rng, max = 40): string {
  const n = rng.int(max + 1);
  let s = '';
  for (let i = 0; i < n; i++) {
    const r = rng.next();
    if (r < 0.7) s += String.fromCharCode(0x20 + rng.int(0x5f));
    else if (r < 0.8) s += String.fromCharCode(rng.int(0x20));
    else if (r < 0.9) s += String.fromCodePoint(0xa0 + rng.int(0x2ff00));
    else if (r < 0.95)
      s += String.fromCharCode(0xd800 + rng.int(0x800)); // lone surrogates, as JSON escapes
    else s += rng.pick(['"', '\\', '{', '}', '[', ']', ':', ',']);
  }
  return s;
}

function randomScalar(rng: Rng): unknown {
  switch (rng.int(9)) {
    case 0:
      return rng.int(1000) - 500;
    case 1:
      return rng.next() * 1e12;
    case 2:
      return null;
    case 3:
      return rng.chance(0.5);
    case 4:
      return rng.pick(ODD_STRINGS);
    default:
      return randomString(rng);
  }
}

function randomValue(rng: Rng, depth = 0): unknown {
  const r = rng.next();
  if (depth > 3 || r < 0.6) return randomScalar(rng);
  if (r < 0.8) return Array.from({ length: rng.int(4) }, () => randomValue(rng, depth + 1));
  return Object.fromEntries(
    Array.from({ length: rng.int(4) }, () => [
      rng.chance(0.2) ? rng.pick(['cmd', 'type', 'payload', 'id', '__proto__']) : randomString(rng, 8),
      randomValue(rng, depth + 1),
    ]),
  );
}

/** A wrong-typed argument: number, object, array, boolean, huge number (as raw JSON). */
function wrongTypeJson(rng: Rng): string {
  return rng.pick([
    () => String(rng.int(100000)),
    () => rng.pick(HUGE_NUMBERS),
    () => '{}',
    () => '{"id":"x"}',
    () => '[]',
    () => '["plain"]',
    () => 'true',
    () => 'false',
    () => JSON.stringify(randomValue(rng)),
  ])();
}

function randomId(rng: Rng): string | undefined {
  const r = rng.next();
  if (r < 0.1) return undefined;
  if (r < 0.5) return JSON.stringify(rng.pick(ODD_STRINGS));
  if (r < 0.8) return JSON.stringify(randomString(rng, 30));
  return wrongTypeJson(rng);
}

const cmdFrame = (fields: Array<[string, string | undefined]>) =>
  `{"type":"command","payload":{${fields
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
    .join(',')}}}`;

const generators: Array<[weight: number, kind: string, gen: (rng: Rng) => Buffer | string]> = [
  [
    14,
    'random bytes',
    (rng) => {
      const parts: number[] = [];
      const n = rng.int(120);
      for (let i = 0; i < n; i++) {
        const r = rng.next();
        if (r < 0.5) parts.push(0x20 + rng.int(0x5f));
        else if (r < 0.6) parts.push(rng.pick([0x00, 0xff, 0xfe, 0x0d, 0x09, 0x80, 0xc0, 0xc1, 0xf5]));
        else if (r < 0.7) parts.push(...rng.pick(LONE_SURROGATES));
        else if (r < 0.8) parts.push(...Buffer.from(rng.pick(['ü', '日本', '🚀', '\u00a0', '\ufeff'])));
        else if (r < 0.9) parts.push(...Buffer.from(rng.pick(['{', '}', '"type"', ':"command"', '"payload":', '{"cmd":"status"}', ','])));
        else {
          let b = rng.int(256);
          if (b === 0x0a) b = 0x0b;
          parts.push(b);
        }
      }
      return Buffer.from(parts);
    },
  ],
  [
    8,
    'truncated JSON',
    (rng) => {
      const whole = rng.pick([
        cmdFrame([['cmd', '"status"']]),
        cmdFrame([
          ['cmd', '"spawn"'],
          ['name', '"plain"'],
          ['mission', '"answer x"'],
        ]),
        JSON.stringify({ type: 'subscribe', payload: { filter: '' } }),
        JSON.stringify({ type: 'command', payload: { cmd: 'logs', id: 'plain-1712345678' } }),
        JSON.stringify(randomValue(rng)),
      ]);
      return whole.slice(0, Math.max(1, rng.int(whole.length)));
    },
  ],
  [
    2,
    'deep nesting',
    (rng) => {
      const depth = rng.pick([1000, 10_000]);
      return rng.pick([
        () => '['.repeat(depth),
        () => '['.repeat(depth) + ']'.repeat(depth),
        () => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
        () => `{"type":"command","payload":{"cmd":"spawn","name":${'['.repeat(depth)}${']'.repeat(depth)},"mission":"x"}}`,
        () => `{"type":"command","payload":{"cmd":"attach","id":${'{"id":'.repeat(depth)}"x"${'}'.repeat(depth)}}}`,
        () => `{"type":"command","payload":${'['.repeat(depth)}${']'.repeat(depth)}}`,
        () => `{"type":"command","payload":{"cmd":"status","deep":${'['.repeat(depth)}0${']'.repeat(depth)}}}`,
      ])();
    },
  ],
  [
    4,
    'huge numbers',
    (rng) =>
      rng.pick([
        () => rng.pick(HUGE_NUMBERS),
        () => `{"type":${rng.pick(HUGE_NUMBERS)}}`,
        () =>
          cmdFrame([
            ['cmd', '"attach"'],
            ['id', rng.pick(HUGE_NUMBERS)],
          ]),
        () => `[${rng.pick(HUGE_NUMBERS)}]`,
      ])(),
  ],
  [
    12,
    'odd type/payload/cmd',
    (rng) => {
      const type = rng.pick([
        '"command"',
        '"command"',
        '"subscribe"',
        '"Command"',
        '""',
        'null',
        '5',
        '[]',
        '{}',
        'true',
        JSON.stringify(randomString(rng, 12)),
        undefined,
      ]);
      const payload = rng.pick([
        () => undefined,
        () => 'null',
        () => '"status"',
        () => '[]',
        () => '7',
        () => 'true',
        () =>
          `{"cmd":${rng.pick([JSON.stringify(rng.pick(COMMANDS)), '5', 'null', '[]', '{}', '"toString"', '"__proto__"', '"constructor"', '""', JSON.stringify(randomString(rng, 12))])}}`,
        () => `{"filter":${rng.pick(['5', '[]', '{}', 'true', '1e400'])}}`,
        () => '{"__proto__":{"cmd":"status"}}',
        () => JSON.stringify(randomValue(rng)),
      ])();
      const fields = [type === undefined ? '' : `"type":${type}`, payload === undefined ? '' : `"payload":${payload}`].filter(
        (f) => f !== '',
      );
      if (rng.chance(0.2)) fields.push(`${JSON.stringify(randomString(rng, 6))}:${JSON.stringify(randomValue(rng))}`);
      if (rng.chance(0.1)) fields.push('"type":"command"'); // a duplicate key: the last one wins
      return `{${fields.join(',')}}`;
    },
  ],
  [
    12,
    'wrong argument types',
    (rng) =>
      rng.pick([
        () =>
          cmdFrame([
            ['cmd', JSON.stringify(rng.pick(['attach', 'logs', 'kill', 'cancel']))],
            ['id', wrongTypeJson(rng)],
          ]),
        () =>
          cmdFrame([
            ['cmd', '"spawn"'],
            ['name', wrongTypeJson(rng)],
            ['mission', '"answer x"'],
          ]),
        () =>
          cmdFrame([
            ['cmd', '"spawn"'],
            ['name', '"plain"'],
            ['mission', rng.pick(['5', '1e400', '{}', '[]', '["answer x"]', 'true', '{"text":"x"}'])],
          ]),
        () =>
          cmdFrame([
            ['cmd', '"spawn"'],
            ['name', '"fz"'],
            ['mission', '"answer x"'],
            ['binding', rng.pick(['5', '""', '{}', '[]', 'true', '"a b"', '"a\\nb"', JSON.stringify('b'.repeat(300))])],
          ]),
        () =>
          cmdFrame([
            ['cmd', '"session_reset"'],
            ['binding', rng.chance(0.5) ? wrongTypeJson(rng) : undefined],
          ]),
        () =>
          cmdFrame([
            ['cmd', '"telegram_reply"'],
            ['bot', wrongTypeJson(rng)],
            ['chat_id', wrongTypeJson(rng)],
            ['text', wrongTypeJson(rng)],
          ]),
      ])(),
  ],
  [
    8,
    'unsafe spawn names',
    (rng) => {
      const name = rng.chance(0.5)
        ? rng.pick(['', '../x', 'a/b', '..', '.x', '-x', '_x', 'a b', 'x'.repeat(65), 'ü', 'a\u0000b', 'plain\n', '1bjorn/..'])
        : randomString(rng, 20);
      return cmdFrame([
        ['cmd', '"spawn"'],
        ['name', JSON.stringify(name)],
        ['mission', rng.chance(0.8) ? '"answer fuzz"' : undefined],
      ]);
    },
  ],
  [
    38,
    'read-only commands with random ids',
    (rng) => {
      const cmd = rng.pick(['status', 'ps', 'attach', 'logs', 'kill', 'cancel', 'attach', 'logs', 'kill', 'cancel']);
      return cmdFrame([
        ['cmd', JSON.stringify(cmd)],
        ['id', randomId(rng)],
      ]);
    },
  ],
  [2, 'blank lines', (rng) => rng.pick(['', ' ', '\t', '\r', '   \t '])],
];

interface Frame {
  kind: string;
  line: Buffer;
  expected: Expected;
}

function generateFrame(rng: Rng): Frame {
  for (;;) {
    const [, kind, gen] = rng.weighted(generators);
    const produced = gen(rng);
    let line = Buffer.isBuffer(produced) ? produced : Buffer.from(produced, 'utf8');
    if (line.includes(0x0a)) continue; // one frame, one line
    if (rng.chance(0.1)) line = Buffer.concat([line, Buffer.from('\r')]);
    const text = line.toString('utf8');
    if ([...PROTO_KEYS].some((k) => text.includes(`"${k}"`)) && /"(id|binding)"/.test(text)) continue;
    try {
      return { kind, line, expected: expectedReply(line) };
    } catch (err) {
      if (err instanceof WouldAct) continue; // never subscribe or start a raider by accident
      throw err;
    }
  }
}

/**
 * `runsMayLive`: valid spawns are mixed in, so ps and status may show their
 * runs; the shape is checked, not the emptiness.
 */
function checkReply(reply: Json, expected: NonNullable<Expected>, root: string, runsMayLive = false): void {
  if ('exact' in expected) {
    if (runsMayLive && Array.isArray(expected.exact.raiders)) {
      expect(Object.keys(reply)).toEqual(['raiders']);
      expect(Array.isArray(reply.raiders)).toBe(true);
    } else expect(reply).toEqual(expected.exact);
  } else if ('anyError' in expected) {
    // An error, with a code when it is one a program decides on.
    expect(ErrorReply.strict().safeParse(reply).success, JSON.stringify(reply)).toBe(true);
  } else if (runsMayLive) expect(reply).toMatchObject({ root, running: expect.any(Number) });
  else expect(reply).toMatchObject({ running: 0, root, slots: [] });
}

describe('fuzzing the control socket', () => {
  it(`answers each of ${CONNECTIONS * FRAMES_PER_CONNECTION} random and malformed frames exactly once (seed ${SEED})`, async () => {
    hall = await startTestHall({ config: 'raiders:\n  plain: {}\n' });
    const h = hall;
    const rng = prng(SEED);
    const connections = Array.from({ length: CONNECTIONS }, () => {
      const frames = Array.from({ length: FRAMES_PER_CONNECTION }, () => generateFrame(rng));
      // A few lines over the limit, on some connections.
      if (rng.chance(0.3)) {
        const at = rng.int(frames.length);
        const line = Buffer.alloc(MAX_FRAME_BYTES + 1 + rng.int(1000), '{');
        frames.splice(at, 1, { kind: 'too long', line, expected: expectedReply(line) });
      }
      return { frames, rng: prng(SEED + 1 + rng.int(1_000_000)) };
    });
    const frames = connections.flatMap((c) => c.frames);
    expect(frames).toHaveLength(CONNECTIONS * FRAMES_PER_CONNECTION);
    const answered = frames.filter((f) => f.expected !== null).length;
    const kinds = new Map<string, number>();
    for (const f of frames) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);

    const t0 = Date.now();
    const results = await Promise.all(
      connections.map(({ frames: fs_, rng: r }) => {
        const stream = Buffer.concat(fs_.flatMap((f) => [f.line, Buffer.from('\n')]));
        return fuzzConnection(h.socket, stream, fs_.filter((f) => f.expected !== null).length, r, 25_000);
      }),
    );
    const elapsed = Date.now() - t0;

    for (const [i, { frames: fs_ }] of connections.entries()) {
      const lines = results[i]!;
      const expectedReplies = fs_.filter((f) => f.expected !== null);
      // Exactly one reply per complete, non-blank line: no more, no fewer.
      expect(lines.length, `connection ${i}`).toBe(expectedReplies.length);
      lines.forEach((line, j) => {
        const frame = expectedReplies[j]!;
        const context = () =>
          `seed ${SEED}, connection ${i}, reply ${j} (${frame.kind}: ${JSON.stringify(frame.line.subarray(0, 120).toString('utf8'))}): ${line.slice(0, 300)}`;
        try {
          const reply: unknown = JSON.parse(line);
          if (!isObject(reply)) throw new Error('the reply is not a JSON object');
          checkReply(reply, frame.expected!, h.root);
        } catch (err) {
          throw new Error(`${context()}: ${(err as Error).message}`);
        }
      });
    }

    // The hall is well and started nothing.
    const status = await h.request({ cmd: 'status' });
    expect(status).toMatchObject({ running: 0, root: h.root, slots: [], queues: {}, runs: [] });
    expect(await h.request({ cmd: 'ps' })).toEqual({ raiders: [] });
    expect(h.hall.bus.subscriberCount()).toBe(0);
    expect(fs.readdirSync(path.join(h.root, '.raider-hall', 'logs'))).toEqual([]);
    expect(h.logs.filter((l) => /failed|crash|uncaught/i.test(l))).toEqual([]);
    console.log(
      `fuzz seed ${SEED}: ${frames.length} frames (${answered} answered, ${frames.length - answered} blank) over ${CONNECTIONS} connections in ${elapsed} ms; ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    );
  }, 60_000);

  it(`survives valid spawns with hostile names among the garbage (seed ${SEED})`, async () => {
    hall = await startTestHall({ config: 'raiders:\n  plain: {}\n' });
    const h = hall;
    const rng = prng(SEED ^ 0xbad);
    const names = ['fz', '1fz', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'x__proto__', 'Z9'];
    const bindings = [undefined, undefined, 'fz-binding', '__proto__', 'constructor', 'toString'];
    const lines: Array<{ line: Buffer; expected: Expected | 'spawn' }> = [];
    let spawns = 0;
    for (let i = 0; i < 400; i++) {
      if (rng.chance(0.05)) {
        const binding = rng.pick(bindings);
        const payload: Json = { cmd: 'spawn', name: rng.pick(names), mission: `answer ${i}` };
        if (binding !== undefined) payload.binding = binding;
        lines.push({ line: Buffer.from(JSON.stringify({ type: 'command', payload })), expected: 'spawn' });
        spawns++;
      } else {
        const f = generateFrame(rng);
        lines.push({ line: f.line, expected: f.expected });
      }
    }
    const tap = await h.events('raider.done');
    const expectedCount = lines.filter((l) => l.expected !== null).length;
    const stream = Buffer.concat(lines.flatMap((l) => [l.line, Buffer.from('\n')]));
    const replies = await fuzzConnection(h.socket, stream, expectedCount, rng, 10_000);
    expect(replies).toHaveLength(expectedCount);
    const answered = lines.filter((l) => l.expected !== null);
    const started: string[] = [];
    replies.forEach((line, j) => {
      const reply = JSON.parse(line) as Json;
      const expected = answered[j]!.expected!;
      if (expected === 'spawn') {
        expect(reply.error, line).toBeUndefined();
        expect(reply.id !== undefined || reply.queued === 1, line).toBe(true);
        if (typeof reply.id === 'string') started.push(reply.id);
      } else checkReply(reply, expected, h.root, true);
    });
    expect(spawns).toBeGreaterThan(5);
    // Every mission ran (queued ones too), and then nothing runs any more.
    await tap.waitFor(() => tap.all.length === spawns, 20_000).catch(() => {});
    expect(tap.all).toHaveLength(spawns);
    expect(tap.all.every((e) => e.status === 'completed')).toBe(true);
    for (const id of started) expect(tap.all.map((e) => e.id)).toContain(id);
    const status = await h.request({ cmd: 'status' });
    expect(status).toMatchObject({ running: 0, root: h.root, slots: [] });
    tap.close();
  }, 60_000);
});
