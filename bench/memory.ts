/**
 * The memory a hall holds: the hall and its fork server if it keeps one,
 * idle with no face configured after 20 finished runs and with 50 raiders
 * running, next to an idle bare Node process (the floor: what any Node
 * program holds before it does anything). Side by side: a hall that starts
 * its raiders through its fork server (RAIDER_HALL_SPAWNER=fork-server, the
 * "before") and one that starts them itself (src/adapters/os/hall-spawner.ts).
 *
 * Three measures per process, from /proc/PID/smaps_rollup:
 * - RSS counts every resident page, the pages of the node binary and its
 *   libraries that both processes share with each other (and with every
 *   other Node process) included, so RSS added up over a tree counts them
 *   twice; it is what `top` and `ps` show;
 * - PSS splits each shared page between the processes that map it: it moves
 *   with how many other Node programs run on the machine;
 * - USS (Private_Clean + Private_Dirty) is the pages no other process maps:
 *   what one more hall adds to the machine.
 * Where the pages are comes from /proc/PID/smaps, one row per mapping summed
 * by kind: the node binary's file, other files (libraries, koffi's .node),
 * anonymous memory (V8's heap, malloc, stacks).
 *
 * The hall's own split (process.memoryUsage(): heap used/total, external,
 * array buffers) is read through bench/memory-hook.mjs, loaded with
 * `--import`: the hall exposes no such figure. The hook's cost shows as the
 * difference between the "default" and "default + hook" rows.
 *
 * V8 flags are weighed side by side in one run, each in a hall of its own
 * (the two sizes in NODE_OPTIONS, the rest on the node command line before
 * bin/raider: Node 20 refuses --optimize-for-size and --lite-mode in
 * NODE_OPTIONS).
 *
 * Target (issue 38): hall tree idle RSS <= 80 MiB and USS <= 34 MiB.
 *
 *   node --import tsx bench/memory.ts [--quick] [--raiders N] [--runs N]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  argNumber,
  Client,
  count,
  fmt,
  machine,
  nowMs,
  request,
  runMain,
  sleep,
  startHall,
  summary,
  table,
  tempRoot,
  waitIdle,
  writeWaitingRaider,
  type Json,
  kib,
  type Memory,
  memoryOf,
} from './lib.js';

const TARGET_RSS_MIB = 80;
const TARGET_USS_MIB = 34;
/** Long enough for start-up garbage to be collected and the heap to settle. */
const SETTLE_MS = 2000;
const HOOK = new URL('./memory-hook.mjs', import.meta.url).href;
const NODE_BINARY = fs.realpathSync(process.execPath);

const ZERO: Memory = { rss: 0, pss: 0, uss: 0 };

function add(a: Memory, b: Memory): Memory {
  return { rss: a.rss + b.rss, pss: a.pss + b.pss, uss: a.uss + b.uss };
}

type Kind = 'node binary' | 'other files' | 'anonymous';
const KINDS: readonly Kind[] = ['node binary', 'other files', 'anonymous'];

/** The process's pages by kind of mapping, from /proc/PID/smaps. */
function mapsOf(pid: number): Record<Kind, Memory> {
  const text = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const byKind: Record<Kind, Memory> = { 'node binary': ZERO, 'other files': ZERO, anonymous: ZERO };
  // Each mapping starts with its address range line; the fields follow until the next one.
  const blocks = text.split(/^(?=[0-9a-f]+-[0-9a-f]+ )/m);
  for (const block of blocks) {
    const header = block.slice(0, block.indexOf('\n'));
    const fields = header.trim().split(/\s+/);
    const file = fields.length >= 6 ? fields.slice(5).join(' ') : '';
    const kind: Kind = file === NODE_BINARY ? 'node binary' : file.startsWith('/') ? 'other files' : 'anonymous';
    const m = { rss: kib(block, 'Rss'), pss: kib(block, 'Pss'), uss: kib(block, 'Private_Clean') + kib(block, 'Private_Dirty') };
    if (Number.isNaN(m.rss)) continue;
    byKind[kind] = add(byKind[kind], m);
  }
  return byKind;
}

/** The hall's direct child that is its fork server, if it keeps one (raiders are then the fork server's children). */
function forkServerOf(hallPid: number): number | null {
  const children = fs.readFileSync(`/proc/${hallPid}/task/${hallPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  for (const child of children) {
    const cmdline = fs.readFileSync(`/proc/${child}/cmdline`, 'utf8');
    if (cmdline.includes('raider-spawner')) return Number(child);
  }
  return null;
}

function memoryOrNone(pid: number | null): Memory {
  return pid === null ? ZERO : memoryOf(pid);
}

const NO_MAPS: Record<Kind, Memory> = { 'node binary': ZERO, 'other files': ZERO, anonymous: ZERO };

/** A process started alone, left idle SETTLE_MS, measured and killed. */
async function idleProcess(args: string[]): Promise<{ memory: Memory; maps: Record<Kind, Memory> }> {
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'ignore', 'ignore'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start node ${args.join(' ')}`);
  await sleep(SETTLE_MS);
  if (child.exitCode !== null) throw new Error(`node ${args.join(' ')} exited ${child.exitCode}`);
  const result = { memory: memoryOf(pid), maps: mapsOf(pid) };
  child.kill('SIGKILL');
  return result;
}

interface Usage {
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

/** What bench/memory-hook.mjs writes: process.memoryUsage() in bytes. */
const HookReport = z.object({
  usage: z.object({ heapUsed: z.number(), heapTotal: z.number(), external: z.number(), arrayBuffers: z.number(), rss: z.number() }),
});

interface Variant {
  label: string;
  nodeArgs: string[];
  /** Flags passed in the hall's NODE_OPTIONS instead (those Node allows there). */
  nodeOptions?: string;
  /** The hall's environment besides (RAIDER_HALL_SPAWNER=fork-server: the fork server). */
  env?: NodeJS.ProcessEnv;
  hook: boolean;
  /** Measured with raiders running too. */
  busy: boolean;
}

interface HallFigures {
  label: string;
  hall: Memory;
  fork: Memory;
  tree: Memory;
  hallMaps: Record<Kind, Memory>;
  forkMaps: Record<Kind, Memory>;
  usage: Usage | undefined;
  busy?: { raiders: number; hall: Memory; fork: Memory; tree: Memory };
}

async function waitForNoneRunning(socket: string, timeoutMs = 30_000): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    const status = await request(socket, { cmd: 'status' });
    if (Number(status.running) === 0) return;
    if (nowMs() > deadline) throw new Error(`still ${status.running} running after ${timeoutMs} ms`);
    await sleep(50);
  }
}

async function readUsage(hallPid: number, file: string): Promise<Usage> {
  process.kill(hallPid, 'SIGUSR2');
  const deadline = nowMs() + 10_000;
  while (!fs.existsSync(file) || fs.statSync(file).size === 0) {
    if (nowMs() > deadline) throw new Error('the hall wrote no memory figures (is bench/memory-hook.mjs loaded?)');
    await sleep(20);
  }
  const u = HookReport.parse(JSON.parse(fs.readFileSync(file, 'utf8'))).usage;
  const mib = (bytes: number): number => bytes / 1024 / 1024;
  return {
    heapUsed: mib(u.heapUsed),
    heapTotal: mib(u.heapTotal),
    external: mib(u.external),
    arrayBuffers: mib(u.arrayBuffers),
    rss: mib(u.rss),
  };
}

async function measureHall(variant: Variant, raider: string, runs: number, busyRaiders: number): Promise<HallFigures> {
  const root = tempRoot('memory');
  const usageFile = path.join(tempRoot('memory-usage'), 'usage.json');
  const nodeArgs = variant.hook ? [...variant.nodeArgs, '--import', HOOK] : variant.nodeArgs;
  const env: NodeJS.ProcessEnv = {
    ...(variant.hook ? { BENCH_MEMORY_OUT: usageFile } : {}),
    ...(variant.nodeOptions ? { NODE_OPTIONS: variant.nodeOptions } : {}),
    ...variant.env,
  };
  const { hall } = await startHall(root, raider, { nodeArgs, env });
  const hallPid = hall.child.pid;
  if (hallPid === undefined) throw new Error('the hall has no pid');
  const client = await Client.connect(hall.socket);
  const replies = await client.pipeline(Array.from({ length: runs }, (): Json => ({ cmd: 'spawn', name: 'mem', mission: 'wait 0' })));
  const failed = replies.filter((r) => typeof r.pid !== 'number');
  if (failed.length > 0) throw new Error(`${failed.length} spawns failed, e.g. ${JSON.stringify(failed[0])}`);
  await waitForNoneRunning(hall.socket);
  await waitIdle(hallPid);
  await sleep(SETTLE_MS);
  const forkPid = forkServerOf(hallPid);
  const hallMemory = memoryOf(hallPid);
  const forkMemory = memoryOrNone(forkPid);
  const figures: HallFigures = {
    label: variant.label,
    hall: hallMemory,
    fork: forkMemory,
    tree: add(hallMemory, forkMemory),
    hallMaps: mapsOf(hallPid),
    forkMaps: forkPid === null ? NO_MAPS : mapsOf(forkPid),
    usage: variant.hook ? await readUsage(hallPid, usageFile) : undefined,
  };
  if (busyRaiders > 0) {
    const busy = await client.pipeline(
      Array.from({ length: busyRaiders }, (): Json => ({ cmd: 'spawn', name: 'mem', mission: 'wait 600' })),
    );
    const busyFailed = busy.filter((r) => typeof r.pid !== 'number');
    if (busyFailed.length > 0) throw new Error(`${busyFailed.length} spawns failed, e.g. ${JSON.stringify(busyFailed[0])}`);
    await sleep(SETTLE_MS);
    const h = memoryOf(hallPid);
    const f = memoryOrNone(forkPid);
    figures.busy = { raiders: busyRaiders, hall: h, fork: f, tree: add(h, f) };
  }
  client.close();
  await hall.stop(30_000);
  return figures;
}

function row(label: string, m: Memory): string[] {
  return [label, fmt(m.rss, 1), fmt(m.pss, 1), fmt(m.uss, 1)];
}

/** The hall as it was: raiders through its fork server, V8's own young generation. */
const BEFORE_ENV = { RAIDER_HALL_SPAWNER: 'fork-server', RAIDER_HALL_SEMI_SPACE_GROWTH: '0' };

const HALL_VARIANTS: readonly Variant[] = [
  { label: 'before: fork server', nodeArgs: [], env: BEFORE_ENV, hook: false, busy: true },
  {
    label: 'step 1: hall spawns',
    nodeArgs: [],
    env: { RAIDER_HALL_SEMI_SPACE_GROWTH: '0' },
    hook: false,
    busy: true,
  },
  { label: 'after: hall spawns, young generation kept', nodeArgs: [], hook: false, busy: true },
  { label: 'after + hook', nodeArgs: [], hook: true, busy: false },
  {
    label: 'step 1 + --max-semi-space-size=1 (NODE_OPTIONS)',
    nodeArgs: [],
    nodeOptions: '--max-semi-space-size=1',
    env: { RAIDER_HALL_SEMI_SPACE_GROWTH: '0' },
    hook: true,
    busy: false,
  },
  { label: 'after + --lite-mode', nodeArgs: ['--lite-mode'], hook: true, busy: false },
  {
    label: 'fork server, young generation kept',
    nodeArgs: [],
    env: { RAIDER_HALL_SPAWNER: 'fork-server' },
    hook: true,
    busy: false,
  },
];

runMain(async () => {
  const raiders = argNumber('--raiders') ?? count(50, 20);
  const runs = argNumber('--runs') ?? 20;
  console.log(`# memory: the hall tree idle after ${runs} runs and with ${raiders} running, ${machine()}`);
  console.log(`load average before: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`);

  const floor = await idleProcess(['-e', 'setInterval(() => {}, 1000)']);
  const raider = writeWaitingRaider(tempRoot('memory-bin'));
  const halls: HallFigures[] = [];
  for (const variant of HALL_VARIANTS) {
    halls.push(await measureHall(variant, raider, runs, variant.busy ? raiders : 0));
  }
  const before = halls[0]!;
  const base = halls[2]!;

  console.log('');
  console.log(`## the hall tree, idle after ${runs} runs, before and after (smaps_rollup; USS = Private_Clean + Private_Dirty)`);
  const rows: string[][] = [row('bare node, idle (floor)', floor.memory)];
  for (const h of [before, halls[1]!, base]) {
    rows.push(row(`${h.label}: hall, idle`, h.hall), row(`${h.label}: fork server, idle`, h.fork), row(`${h.label}: tree, idle`, h.tree));
  }
  for (const h of halls) {
    if (h.busy) rows.push(row(`${h.label}: tree, ${h.busy.raiders} running`, h.busy.tree));
  }
  console.log(table(['MiB', 'RSS', 'PSS', 'USS'], rows));

  console.log('');
  console.log('## where the pages are (smaps, by mapping), idle');
  const mapRows: string[][] = [];
  for (const [who, maps] of [
    ['bare node', floor.maps],
    ['before: hall', before.hallMaps],
    ['before: fork server', before.forkMaps],
    ['after: hall', base.hallMaps],
  ] as const) {
    for (const kind of KINDS) mapRows.push(row(`${who}: ${kind}`, maps[kind]));
  }
  console.log(table(['MiB', 'RSS', 'PSS', 'USS'], mapRows));

  console.log('');
  console.log(`## V8 flags on the hall, each in a hall of its own, idle after ${runs} runs`);
  console.log(
    table(
      [
        'MiB',
        'hall RSS',
        'hall USS',
        'fork RSS',
        'fork USS',
        'tree RSS',
        'tree PSS',
        'tree USS',
        'heap used',
        'heap total',
        'external',
        'array buffers',
        'anon RSS',
      ],
      halls.map((h) => [
        h.label,
        fmt(h.hall.rss, 1),
        fmt(h.hall.uss, 1),
        fmt(h.fork.rss, 1),
        fmt(h.fork.uss, 1),
        fmt(h.tree.rss, 1),
        fmt(h.tree.pss, 1),
        fmt(h.tree.uss, 1),
        h.usage ? fmt(h.usage.heapUsed, 1) : '-',
        h.usage ? fmt(h.usage.heapTotal, 1) : '-',
        h.usage ? fmt(h.usage.external, 1) : '-',
        h.usage ? fmt(h.usage.arrayBuffers, 1) : '-',
        fmt(h.hallMaps.anonymous.rss, 1),
      ]),
    ),
  );
  console.log(`load average after: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`);

  const busy = halls.find((h) => h.label === base.label)?.busy;
  const rowOf = (h: HallFigures) => ({
    bench: 'memory',
    metric: `${h.label}: hall tree idle after ${runs} runs, no face: RSS / PSS / USS (MiB)`,
    value: `${fmt(h.tree.rss, 1)} / ${fmt(h.tree.pss, 1)} / ${fmt(h.tree.uss, 1)}`,
    target: `RSS <= ${TARGET_RSS_MIB}, USS <= ${TARGET_USS_MIB} MiB`,
    met: h.tree.rss <= TARGET_RSS_MIB && h.tree.uss <= TARGET_USS_MIB,
  });
  summary([
    rowOf(before),
    rowOf(halls[1]!),
    rowOf(base),
    ...(busy
      ? [
          {
            bench: 'memory',
            metric: `${base.label}: hall tree with ${busy.raiders} running: RSS / PSS / USS (MiB)`,
            value: `${fmt(busy.tree.rss, 1)} / ${fmt(busy.tree.pss, 1)} / ${fmt(busy.tree.uss, 1)}`,
            target: 'RSS <= 100 MiB',
            met: busy.tree.rss <= 100,
          },
        ]
      : []),
  ]);
});
