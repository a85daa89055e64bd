/**
 * The control socket fuzzed: 100,000 random frames and byte strings over 20
 * connections at once, each stream cut into random pieces. Every complete,
 * non-blank line must get exactly one reply, in order, of the kind the wire
 * contract says; the hall must not crash, hang, start a
 * raider or keep memory. test/integration/fuzz.test.ts does 10,000 with the
 * same oracle in `npm test`; this is the long run, with figures.
 *
 *   node --import tsx bench/fuzz-socket.ts [--quick] [--frames N] [--seed S] [--passes P]
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  argNumber,
  count,
  fmt,
  machine,
  nowMs,
  processCpuMs,
  request,
  rssMb,
  runMain,
  startHall,
  summary,
  tempRoot,
  writeMinimalRaider,
  type Json,
} from './lib.js';
import { prng, type Rng } from '../test/support/prng.js';
import { fuzzConnection } from '../test/support/fuzz-connection.js';
import { expectedReply, isObject, MAX_FRAME_BYTES, WouldAct, type Expected } from '../test/support/control-frame-oracle.js';

const CONNECTIONS = 20;
const COMMANDS = ['spawn', 'ps', 'status', 'attach', 'logs', 'kill', 'cancel', 'session_reset', 'telegram_reply'];

// ---------------------------------------------------------------- the oracle

/** Why a reply is not the one expected, or null when it is. */
function check(reply: Json, expected: NonNullable<Expected>): string | null {
  if ('exact' in expected)
    return JSON.stringify(reply) === JSON.stringify(expected.exact) ? null : `expected ${JSON.stringify(expected.exact)}`;
  if ('anyError' in expected) return typeof reply.error === 'string' && Object.keys(reply).length === 1 ? null : 'expected an error';
  return reply.running === 0 && typeof reply.root === 'string' ? null : 'expected a status with nothing running';
}

// ------------------------------------------------------------ the generators

const ODD = [
  '',
  ' ',
  'status',
  'STATUS',
  'ü 日本 🚀',
  '\u0000',
  '\ud800',
  '\u2028',
  '../x',
  'a/b',
  '..',
  '-x',
  '_x',
  'x'.repeat(65),
  '%s%n',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a hostile literal name the fuzzer sends on purpose
  '${x}',
  'a b',
  '__proto__',
  'constructor',
  'toString',
];
const HUGE = ['1e400', '-1e400', '123456789012345678901234567890', '-0', '9007199254740993', `1${'0'.repeat(400)}`];

function randomString(rng: Rng, max = 30): string {
  let s = '';
  for (let i = rng.int(max + 1); i > 0; i--) {
    const r = rng.next();
    if (r < 0.75) s += String.fromCharCode(0x20 + rng.int(0x5f));
    else if (r < 0.85) s += String.fromCharCode(rng.int(0x20));
    else if (r < 0.95) s += String.fromCodePoint(0xa0 + rng.int(0x2ff00));
    else s += String.fromCharCode(0xd800 + rng.int(0x800));
  }
  return s;
}

function randomValue(rng: Rng, depth = 0): unknown {
  const r = rng.next();
  if (depth > 2 || r < 0.6)
    return rng.pick<() => unknown>([
      () => rng.int(1000) - 500,
      () => null,
      () => rng.chance(0.5),
      () => rng.pick(ODD),
      () => randomString(rng),
    ])();
  if (r < 0.8) return Array.from({ length: rng.int(4) }, () => randomValue(rng, depth + 1));
  return Object.fromEntries(
    Array.from({ length: rng.int(4) }, () => [
      rng.chance(0.2) ? rng.pick(['cmd', 'id', 'name', '__proto__']) : randomString(rng, 8),
      randomValue(rng, depth + 1),
    ]),
  );
}

/** A JSON text of any type but a safe raider name. */
function notAName(rng: Rng): string {
  return rng.pick<() => string>([
    () => JSON.stringify(rng.pick(['', '../x', 'a/b', '-x', '_x', 'x'.repeat(65), 'a b', 'ü', 'a\u0000b', '.hidden'])),
    () => String(rng.int(1000)),
    () => rng.pick(HUGE),
    () => '[]',
    () => '{"name":"x"}',
    () => 'true',
    () => 'null',
    () => JSON.stringify(`${randomString(rng, 10)}/`),
  ])();
}

const command = (fields: Array<[string, string | undefined]>) =>
  `{"type":"command","payload":{${fields
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
    .join(',')}}}`;

const GENERATORS: Array<[number, (rng: Rng) => string | Buffer]> = [
  [
    15,
    (rng) =>
      Buffer.from(
        Array.from({ length: rng.int(100) }, () => {
          const b = rng.int(256);
          return b === 0x0a ? 0x0b : b;
        }),
      ),
  ],
  [
    10,
    (rng) => {
      const whole = rng.pick([
        command([['cmd', '"status"']]),
        command([
          ['cmd', '"logs"'],
          ['id', '"x-1"'],
        ]),
        JSON.stringify(randomValue(rng)),
      ]);
      return whole.slice(0, Math.max(1, rng.int(whole.length)));
    },
  ],
  [
    3,
    (rng) => {
      const d = rng.pick([100, 3000]);
      return rng.pick([
        '['.repeat(d),
        `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`,
        `{"type":"command","payload":{"cmd":"status","x":${'['.repeat(d)}${']'.repeat(d)}}}`,
      ]);
    },
  ],
  [
    4,
    (rng) =>
      rng.pick([
        rng.pick(HUGE),
        `{"type":${rng.pick(HUGE)}}`,
        command([
          ['cmd', '"attach"'],
          ['id', rng.pick(HUGE)],
        ]),
      ]),
  ],
  [
    15,
    (rng) => {
      const type = rng.pick([
        '"command"',
        '"command"',
        '"Command"',
        '""',
        'null',
        '5',
        '[]',
        '{}',
        JSON.stringify(randomString(rng, 10)),
        undefined,
      ]);
      const payload = rng.pick([
        undefined,
        'null',
        '"status"',
        '[]',
        '7',
        `{"cmd":${rng.pick([JSON.stringify(rng.pick(COMMANDS)), '5', 'null', '[]', '"toString"', '"__proto__"', JSON.stringify(randomString(rng, 10))])}}`,
        JSON.stringify(randomValue(rng)),
      ]);
      const fields = [type === undefined ? '' : `"type":${type}`, payload === undefined ? '' : `"payload":${payload}`].filter(
        (f) => f !== '',
      );
      return `{${fields.join(',')}}`;
    },
  ],
  [3, (rng) => `{"type":"subscribe","payload":{"filter":${rng.pick(['5', '[]', '{}', 'true', '1e400'])}}}`],
  [
    12,
    (rng) =>
      command([
        ['cmd', JSON.stringify(rng.pick(['attach', 'logs', 'kill', 'cancel']))],
        ['id', rng.chance(0.5) ? JSON.stringify(rng.chance(0.5) ? rng.pick(ODD) : randomString(rng)) : JSON.stringify(randomValue(rng))],
      ]),
  ],
  [
    10,
    (rng) =>
      command([
        ['cmd', '"spawn"'],
        ['name', notAName(rng)],
        ['mission', rng.pick(['"answer x"', '5', '[]', undefined])],
        ['binding', rng.pick([undefined, '5', '""', '"a b"'])],
      ]),
  ],
  [
    8,
    (rng) =>
      command([
        ['cmd', JSON.stringify(rng.pick(['session_reset', 'telegram_reply']))],
        ['binding', JSON.stringify(randomValue(rng))],
        ['text', JSON.stringify(randomValue(rng))],
      ]),
  ],
  [
    18,
    (rng) =>
      command([
        ['cmd', JSON.stringify(rng.pick(['status', 'ps']))],
        ['id', rng.chance(0.5) ? JSON.stringify(randomValue(rng)) : undefined],
      ]),
  ],
  [2, (rng) => rng.pick(['', ' ', '\t', '\r', '  \t '])],
];

interface Frame {
  line: Buffer;
  expected: Expected;
}

function frame(rng: Rng): Frame {
  for (;;) {
    const gen = rng.weighted(GENERATORS)[1];
    const produced = gen(rng);
    let line = Buffer.isBuffer(produced) ? produced : Buffer.from(produced, 'utf8');
    if (line.includes(0x0a)) continue;
    if (rng.chance(0.1)) line = Buffer.concat([line, Buffer.from('\r')]);
    try {
      return { line, expected: expectedReply(line) };
    } catch (err) {
      if (err instanceof WouldAct) continue;
      throw err;
    }
  }
}

runMain(async () => {
  const total = argNumber('--frames') ?? count(100_000, 20_000);
  const seed = argNumber('--seed') ?? 0x5eed_0009;
  console.log(`# control-socket fuzz: ${total} frames over ${CONNECTIONS} connections, seed ${seed}, ${machine()}`);
  const root = tempRoot('fuzz');
  fs.writeFileSync(path.join(root, '.raider-hall.yml'), 'raiders:\n  plain: {}\n');
  const { hall } = await startHall(root, writeMinimalRaider(tempRoot('fuzz-bin')));
  const pid = hall.child.pid!;

  const rng = prng(seed);
  const perConnection = Math.ceil(total / CONNECTIONS);
  const plans = Array.from({ length: CONNECTIONS }, (_, i) => {
    const frames = Array.from({ length: Math.min(perConnection, total - i * perConnection) }, () => frame(rng));
    // Some lines over the 1 MiB limit.
    if (i % 4 === 0) {
      const line = Buffer.alloc(MAX_FRAME_BYTES + 1 + rng.int(1000), 0x7b);
      frames.splice(rng.int(frames.length), 1, { line, expected: expectedReply(line) });
    }
    return { frames, rng: prng(seed + 1 + i) };
  });
  const answered = plans.reduce((n, p) => n + p.frames.filter((f) => f.expected !== null).length, 0);
  const bytes = plans.reduce((n, p) => n + p.frames.reduce((m, f) => m + f.line.length + 1, 0), 0);

  const rss0 = rssMb(pid);
  const cpu0 = processCpuMs(pid);
  const t0 = nowMs();
  const results = await Promise.all(
    plans.map((p) => {
      const stream = Buffer.concat(p.frames.flatMap((f) => [f.line, Buffer.from('\n')]));
      return fuzzConnection(hall.socket, stream, p.frames.filter((f) => f.expected !== null).length, p.rng, 300_000);
    }),
  );
  const ms = nowMs() - t0 - 300;
  const cpu = processCpuMs(pid) - cpu0;
  const rss1 = rssMb(pid);
  // The same again: memory that a pass leaves behind would show as growth here.
  for (let pass = 2; pass <= (argNumber('--passes') ?? 1); pass++) {
    await Promise.all(
      plans.map((p) =>
        fuzzConnection(
          hall.socket,
          Buffer.concat(p.frames.flatMap((f) => [f.line, Buffer.from('\n')])),
          p.frames.filter((f) => f.expected !== null).length,
          p.rng,
          300_000,
        ),
      ),
    );
    console.log(`pass ${pass}: RSS ${fmt(rssMb(pid), 1)} MB`);
  }

  const problems: string[] = [];
  plans.forEach((p, i) => {
    const expected = p.frames.filter((f) => f.expected !== null);
    const lines = results[i]!;
    if (lines.length !== expected.length) problems.push(`connection ${i}: ${lines.length} replies to ${expected.length} lines`);
    lines.slice(0, expected.length).forEach((line, j) => {
      let reply: unknown;
      try {
        reply = JSON.parse(line);
      } catch {
        problems.push(`connection ${i}, reply ${j}: not JSON: ${line.slice(0, 200)}`);
        return;
      }
      const why = isObject(reply) ? check(reply, expected[j]!.expected!) : 'not an object';
      if (why)
        problems.push(
          `connection ${i}, reply ${j} to ${JSON.stringify(expected[j]!.line.subarray(0, 100).toString('utf8'))}: ${why}; got ${line.slice(0, 200)}`,
        );
    });
  });

  const status = await request(hall.socket, { cmd: 'status' });
  const logs = fs.readdirSync(path.join(root, '.raider-hall', 'logs'));
  if (status.running !== 0) problems.push(`status after the fuzz: ${JSON.stringify(status)}`);
  if (logs.length > 0) problems.push(`the fuzz started raiders: ${logs.join(', ')}`);
  const stopMs = await hall.stop();

  console.log('');
  console.log(
    `${total} frames (${fmt(bytes / 1048576, 1)} MB, ${answered} to answer) over ${CONNECTIONS} connections in ${fmt(ms, 0)} ms: ${fmt((total / ms) * 1000, 0)} frames/s`,
  );
  console.log(
    `hall CPU ${fmt(cpu, 0)} ms (${fmt((cpu / total) * 1000, 1)} µs per frame); RSS ${fmt(rss0, 1)} MB before, ${fmt(rss1, 1)} MB after; stopped in ${fmt(stopMs, 0)} ms`,
  );
  console.log(
    problems.length === 0
      ? 'every line answered once, in order, as the contract says; the hall is well and started nothing'
      : `${problems.length} problem(s):\n${problems.slice(0, 20).join('\n')}`,
  );

  summary([
    {
      bench: 'fuzz-socket',
      metric: `${total} random frames, ${CONNECTIONS} connections: frames/s; problems`,
      value: `${fmt((total / ms) * 1000, 0)}/s; ${problems.length}`,
      target: 'each answered once, hall up',
      met: problems.length === 0,
    },
    { bench: 'fuzz-socket', metric: 'hall RSS before / after (MB)', value: `${fmt(rss0, 1)} / ${fmt(rss1, 1)}` },
  ]);
  if (problems.length > 0) throw new Error('the fuzz found problems');
});
