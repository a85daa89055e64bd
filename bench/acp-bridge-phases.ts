/**
 * Where an ACP run's time and memory go in the bridge (`raider acp-client`,
 * docs/agents.md), started as the hall starts it (`node bin/raider acp-client
 * --stream-json --agent-command AGENT -- MISSION`, its own process group)
 * with test/fixtures/scripted-acp-agent.mjs as its agent, side by side for
 * each variant of how the bridge is started (V8 flags), round by round.
 *
 * Time (mission `answer hello`), read inside the bridge by
 * bench/acp-bridge-phases-hook.cjs: Node's start (spawn to the hook), the
 * bridge's modules (to the agent's spawn), the agent's start and
 * `initialize` (to its answer), `session/new`, the prompt to the first
 * `session/update`, and the turn's end to the bridge's exit (the agent
 * stopped). Memory (mission `hang`, the agent waits for a cancel): the
 * bridge's smaps_rollup (PSS split into anonymous memory, its heap and
 * malloc, and file-backed pages, the node binary's share) and its
 * process.memoryUsage().
 *
 *   node --import tsx bench/acp-bridge-phases.ts [--quick] [--rounds N] [--variants a,b]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { ACP_BRIDGE_NODE_FLAGS } from '../src/actors/raider-command.js';
import {
  argNumber,
  count,
  epochMs,
  fmt,
  kib,
  machine,
  RAIDER_BIN,
  REPO,
  runMain,
  stats,
  STATS_HEADERS,
  statsRow,
  summary,
  table,
  tempRoot,
} from './lib.js';

const AGENT = path.join(REPO, 'test', 'fixtures', 'scripted-acp-agent.mjs');
const HOOK = path.join(REPO, 'bench', 'acp-bridge-phases-hook.cjs');

/**
 * How the bridge is started: node's flags before bin/raider, its environment,
 * and which bundle: dist's (as bin/raider loads it), or the bridge bundled as
 * it was before it was made lean (no minifying, every zod translation), built
 * here and loaded by bench/acp-bridge-bundle-loader.cjs.
 */
interface Variant {
  flags: readonly string[];
  env?: NodeJS.ProcessEnv;
  unlean?: boolean;
}

const LOADER = path.join(REPO, 'bench', 'acp-bridge-bundle-loader.cjs');
const WITHOUT_LITE = ACP_BRIDGE_NODE_FLAGS.filter((f) => f !== '--lite-mode' && f !== '--no-expose-wasm');

const VARIANTS: Record<string, Variant> = {
  before: { flags: [], unlean: true },
  'lean bundle': { flags: [] },
  flags: { flags: ACP_BRIDGE_NODE_FLAGS, unlean: true },
  after: { flags: ACP_BRIDGE_NODE_FLAGS },
  'after without lite-mode': { flags: WITHOUT_LITE },
  'lean + semi-space only': { flags: ['--max-semi-space-size=1'] },
  'after + MALLOC_ARENA_MAX=2': { flags: ACP_BRIDGE_NODE_FLAGS, env: { MALLOC_ARENA_MAX: '2' } },
  'after + optimize-for-size': { flags: [...ACP_BRIDGE_NODE_FLAGS, '--optimize-for-size'] },
};

/** The bridge as scripts/bundle-cli.ts bundled it before it was lean. */
async function buildUnleanBundle(dir: string): Promise<string> {
  const outfile = path.join(dir, 'acp-raider.bundle.cjs');
  await build({
    entryPoints: [path.join(REPO, 'dist', 'acp-raider', 'acp-raider.js')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
    define: { 'import.meta.url': '__bundleUrl' },
    logLevel: 'warning',
  });
  return outfile;
}

let unleanBundle = '';

type Marks = Record<string, number>;

interface Started {
  pid: number;
  out: string;
  exited: Promise<number | null>;
  /** Resolves when the bridge's stdout holds `needle`. */
  printed(needle: string): Promise<void>;
}

function startBridge(variant: Variant, dir: string, mission: string, n: number): Started {
  const out = path.join(dir, `phases-${n}.json`);
  const entry = variant.unlean ? [LOADER] : [RAIDER_BIN, 'acp-client'];
  const bundle = variant.unlean ? { BENCH_ACP_BUNDLE: unleanBundle } : {};
  const child = spawn(
    process.execPath,
    ['--require', HOOK, ...variant.flags, ...entry, '--stream-json', '--agent-command', AGENT, '--', mission],
    {
      cwd: dir,
      env: { ...process.env, ...variant.env, ...bundle, BENCH_PHASES_OUT: out },
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
    },
  );
  let text = '';
  const waiters: Array<{ needle: string; resolve: () => void }> = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    text += chunk;
    for (const w of waiters.filter((w) => text.includes(w.needle))) w.resolve();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    pid: child.pid ?? -1,
    out,
    exited,
    printed: (needle) => (text.includes(needle) ? Promise.resolve() : new Promise((resolve) => waiters.push({ needle, resolve }))),
  };
}

const PHASES = [
  ['node start', 'spawn', 'hook'],
  ["bridge's modules", 'hook', 'agentSpawn'],
  ["agent's start + initialize", 'agentSpawn', 'answered initialize'],
  ['session/new', 'answered initialize', 'answered session/new'],
  ['prompt → first update', 'sent session/prompt', 'first update'],
  ['first update → prompt answered', 'first update', 'answered session/prompt'],
  ['answered → bridge exited', 'answered session/prompt', 'exit'],
  ['total: spawn → exit', 'spawn', 'exit'],
] as const;

/** Updates in the hot-path run: a message chunk each, a tool call and its result after every tenth. */
const STREAM_UPDATES = 2000;

async function timedRun(variant: Variant, dir: string, n: number, mission = 'answer hello'): Promise<Marks> {
  const spawnAt = epochMs();
  const run = startBridge(variant, dir, mission, n);
  const code = await run.exited;
  if (code !== 0) throw new Error(`the bridge exited ${code}`);
  return { spawn: spawnAt, ...(JSON.parse(fs.readFileSync(run.out, 'utf8')) as Marks) };
}

interface MemoryRow {
  pss: number;
  pssAnon: number;
  pssFile: number;
  uss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  newSpace: number;
  codeSpace: number;
}

async function memoryRun(variant: Variant, dir: string, n: number): Promise<MemoryRow> {
  const run = startBridge(variant, dir, 'hang', n);
  await run.printed('waiting');
  // Let the bridge settle after the turn's start (no polling: a fixed look after the event).
  await new Promise((resolve) => setTimeout(resolve, 500));
  const smaps = fs.readFileSync(`/proc/${run.pid}/smaps_rollup`, 'utf8');
  fs.rmSync(`${run.out}.mem`, { force: true });
  process.kill(run.pid, 'SIGUSR2');
  for (let i = 0; i < 2000 && !fs.existsSync(`${run.out}.mem`); i++) await new Promise((r) => setTimeout(r, 1));
  const mem = JSON.parse(fs.readFileSync(`${run.out}.mem`, 'utf8')) as { usage: NodeJS.MemoryUsage; spaces: Record<string, number> };
  process.kill(run.pid, 'SIGINT');
  await run.exited;
  const mib = (k: string) => kib(smaps, k);
  const b = (v: number | undefined) => (v ?? 0) / (1024 * 1024);
  return {
    pss: mib('Pss'),
    pssAnon: mib('Pss_Anon'),
    pssFile: mib('Pss_File'),
    uss: mib('Private_Clean') + mib('Private_Dirty'),
    heapTotal: b(mem.usage.heapTotal),
    heapUsed: b(mem.usage.heapUsed),
    external: b(mem.usage.external),
    newSpace: b(mem.spaces.new_space),
    codeSpace: b(mem.spaces.code_space),
  };
}

function median(values: number[]): number {
  return stats(values).median;
}

runMain(async () => {
  const rounds = argNumber('--rounds') ?? count(20, 6);
  const pickArg = process.argv.indexOf('--variants');
  const names = pickArg >= 0 ? (process.argv[pickArg + 1] ?? '').split(',') : Object.keys(VARIANTS);
  const variants = names.map((name) => {
    const v = VARIANTS[name];
    if (v === undefined) throw new Error(`no variant ${name} (${Object.keys(VARIANTS).join(', ')})`);
    return [name, v] as const;
  });
  console.log(`# acp-bridge-phases: ${rounds} rounds, variants ${names.join(', ')}; ${machine()}`);
  const dir = tempRoot('acp-bridge-phases');
  unleanBundle = await buildUnleanBundle(dir);
  let n = 0;
  for (const [, v] of variants) await timedRun(v, dir, n++);
  const times = new Map<string, Marks[]>(names.map((k) => [k, []]));
  const memory = new Map<string, MemoryRow[]>(names.map((k) => [k, []]));
  const hot = new Map<string, number[]>(names.map((k) => [k, []]));
  const hotCpu = new Map<string, number[]>(names.map((k) => [k, []]));
  for (let i = 0; i < rounds; i++) {
    for (const [name, v] of variants) times.get(name)?.push(await timedRun(v, dir, n++));
    for (const [name, v] of variants) {
      const m = await timedRun(v, dir, n++, `stream ${STREAM_UPDATES}`);
      hot.get(name)?.push((m['answered session/prompt'] ?? Number.NaN) - (m['sent session/prompt'] ?? Number.NaN));
      hotCpu.get(name)?.push(m.cpuMs ?? Number.NaN);
    }
    for (const [name, v] of variants) memory.get(name)?.push(await memoryRun(v, dir, n++));
  }
  const rows: string[][] = [];
  for (const [label, from, to] of PHASES) {
    rows.push([
      label,
      ...names.map((k) => fmt(median((times.get(k) ?? []).map((m) => (m[to] ?? Number.NaN) - (m[from] ?? Number.NaN))), 0)),
    ]);
  }
  console.log(`\n## time, median of ${rounds} (ms)\n`);
  console.log(table(['phase', ...names], rows));
  console.log(
    `\n## the hot path: a turn of ${STREAM_UPDATES} message chunks and ${STREAM_UPDATES / 10} tool calls, prompt → answered (ms)\n`,
  );
  console.log(
    table(
      STATS_HEADERS,
      names.map((k) => statsRow(k, stats(hot.get(k) ?? []), 0)),
    ),
  );
  console.log("\nthe bridge's CPU time over that whole run, its start included (ms):\n");
  console.log(
    table(
      STATS_HEADERS,
      names.map((k) => statsRow(k, stats(hotCpu.get(k) ?? []), 0)),
    ),
  );
  for (const k of names) {
    const total = (times.get(k) ?? []).map((m) => (m.exit ?? Number.NaN) - (m.spawn ?? Number.NaN));
    console.log(table(STATS_HEADERS, [statsRow(`${k}: spawn → exit`, stats(total), 0)]));
  }
  const keys: Array<[keyof MemoryRow, string]> = [
    ['pss', 'PSS'],
    ['pssAnon', 'PSS anonymous (heap, malloc)'],
    ['pssFile', 'PSS file-backed (node binary, libraries)'],
    ['uss', 'USS'],
    ['heapTotal', 'V8 heap total'],
    ['heapUsed', 'V8 heap used'],
    ['newSpace', 'V8 young generation (new space)'],
    ['codeSpace', 'V8 code space'],
    ['external', 'external (buffers)'],
  ];
  console.log(`\n## memory of a bridge whose agent waits, median of ${rounds} (MiB)\n`);
  console.log(
    table(
      ['', ...names],
      keys.map(([k, label]) => [label, ...names.map((name) => fmt(median((memory.get(name) ?? []).map((m) => m[k])), 1))]),
    ),
  );
  console.log(`\nload average at the end: ${machine().replace(/.*load average /, '')}`);
  summary(
    names.flatMap((name) => [
      {
        bench: 'acp-bridge-phases',
        metric: `${name}: spawn → exit median (ms)`,
        value: fmt(median((times.get(name) ?? []).map((m) => (m.exit ?? Number.NaN) - (m.spawn ?? Number.NaN))), 0),
      },
      {
        bench: 'acp-bridge-phases',
        metric: `${name}: ${STREAM_UPDATES}-chunk turn, prompt → answered median (ms)`,
        value: fmt(median(hot.get(name) ?? []), 0),
      },
      {
        bench: 'acp-bridge-phases',
        metric: `${name}: PSS of a waiting bridge median (MiB)`,
        value: fmt(median((memory.get(name) ?? []).map((m) => m.pss)), 1),
      },
    ]),
  );
});
