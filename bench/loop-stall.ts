/**
 * The hall's event loop during a burst of 500 missions that start at once,
 * with its fork server (RAIDER_HALL_SPAWNER=fork-server, the "before") and
 * starting raiders itself (src/adapters/os/hall-spawner.ts), alternated in
 * rounds so both see the same machine. Read inside the hall by
 * bench/loop-stall-hook.mjs: the event-loop delay histogram (perf_hooks,
 * 1 ms resolution: its max is the longest stall, scheduling by a busy
 * machine included) and, in the hall that starts raiders itself, the time of
 * each posix_spawn start on the loop (the guarantee: a start never blocks
 * the loop for more than 1 ms).
 *
 *   node --import tsx bench/loop-stall.ts [--quick] [--missions N] [--rounds N]
 */
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
  stats,
  summary,
  table,
  tempRoot,
  writeWaitingRaider,
  type Json,
} from './lib.js';

const HOOK = new URL('./loop-stall-hook.mjs', import.meta.url).href;
const TARGET_START_MS = 1;

const HookReport = z.object({
  loop: z.object({ max: z.number(), p99: z.number(), p50: z.number(), count: z.number() }),
  starts: z.array(z.number()),
  waits: z.array(z.number()),
  controls: z.array(z.number()),
});
type Report = z.infer<typeof HookReport>;

interface Variant {
  label: string;
  env: NodeJS.ProcessEnv;
}

const VARIANTS: readonly Variant[] = [
  { label: 'fork server (before)', env: { RAIDER_HALL_SPAWNER: 'fork-server' } },
  { label: 'hall spawns (after)', env: {} },
];

async function waitForNoneRunning(socket: string, timeoutMs = 120_000): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    const status = await request(socket, { cmd: 'status' });
    if (Number(status.running) === 0 && Number(status.queued ?? 0) === 0) return;
    if (nowMs() > deadline) throw new Error(`still ${status.running} running after ${timeoutMs} ms`);
    await sleep(50);
  }
}

async function report(pid: number, file: string): Promise<Report> {
  fs.rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  const deadline = nowMs() + 10_000;
  while (!fs.existsSync(file) || fs.statSync(file).size === 0) {
    if (nowMs() > deadline) throw new Error('the hall wrote no loop figures (is bench/loop-stall-hook.mjs loaded?)');
    await sleep(20);
  }
  await sleep(20);
  return HookReport.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
}

async function burst(variant: Variant, raider: string, missions: number): Promise<Report & { ms: number }> {
  const root = tempRoot('loop-stall');
  const out = path.join(tempRoot('loop-stall-out'), 'loop.json');
  const { hall } = await startHall(root, raider, {
    nodeArgs: ['--import', HOOK],
    env: { ...variant.env, BENCH_LOOP_OUT: out },
  });
  const pid = hall.child.pid;
  if (pid === undefined) throw new Error('the hall has no pid');
  const client = await Client.connect(hall.socket);
  const spawn = (n: number) => Array.from({ length: n }, (): Json => ({ cmd: 'spawn', name: 'burst', mission: 'wait 0' }));
  await client.pipeline(spawn(20));
  await waitForNoneRunning(hall.socket);
  await report(pid, out);
  const t0 = nowMs();
  const replies = await client.pipeline(spawn(missions));
  const failed = replies.filter((r) => typeof r.pid !== 'number' && r.queued === undefined);
  if (failed.length > 0) throw new Error(`${failed.length} spawns failed, e.g. ${JSON.stringify(failed[0])}`);
  await waitForNoneRunning(hall.socket);
  const ms = nowMs() - t0;
  const figures = await report(pid, out);
  client.close();
  await hall.stop(60_000);
  return { ...figures, ms };
}

runMain(async () => {
  const missions = argNumber('--missions') ?? count(500, 100);
  const rounds = argNumber('--rounds') ?? count(3, 1);
  console.log(`# loop stall: ${missions} missions at once, ${rounds} rounds, ${machine()}`);
  console.log(`load average before: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`);
  const raider = writeWaitingRaider(tempRoot('loop-stall-bin'));
  const results = new Map<string, Array<Report & { ms: number }>>(VARIANTS.map((v) => [v.label, []]));
  for (let round = 0; round < rounds; round++) {
    for (const variant of VARIANTS) results.get(variant.label)?.push(await burst(variant, raider, missions));
  }
  console.log('');
  console.log(
    '## per burst: loop delay max / p99 / p50 (ms); starts on the hall loop: n, median, p99, max (ms), and the max less the time the thread waited on a run queue meanwhile',
  );
  const rows: string[][] = [];
  for (const [label, runs] of results) {
    runs.forEach((r, i) => {
      const s = [...r.starts].sort((a, b) => a - b);
      const p99 = s.length > 0 ? (s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? Number.NaN) : Number.NaN;
      rows.push([
        `${label} #${i + 1}`,
        fmt(r.loop.max, 1),
        fmt(r.loop.p99, 1),
        fmt(r.loop.p50, 1),
        String(s.length),
        s.length > 0 ? fmt(stats(s).median, 3) : '-',
        s.length > 0 ? fmt(p99, 3) : '-',
        s.length > 0 ? fmt(stats(s).max, 3) : '-',
        s.length > 0 ? fmt(Math.max(...r.starts.map((t, k) => t - (r.waits[k] ?? 0))), 3) : '-',
        r.controls.length > 0 ? `${fmt(stats(r.controls).median, 3)} / ${fmt(stats(r.controls).max, 3)}` : '-',
        fmt(r.ms, 0),
      ]);
    });
  }
  console.log(
    table(
      [
        '',
        'loop max',
        'loop p99',
        'loop p50',
        'starts',
        'start median',
        'start p99',
        'start max',
        'max less run-queue wait',
        'control 0.1 ms: median / max',
        'burst ms',
      ],
      rows,
    ),
  );
  console.log(`load average after: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`);
  const medianOf = (label: string, pick: (r: Report & { ms: number }) => number) => stats((results.get(label) ?? []).map(pick)).median;
  const after = results.get(VARIANTS[1]!.label) ?? [];
  const allStarts = after.flatMap((r) => r.starts);
  const startMax = allStarts.length > 0 ? Math.max(...allStarts) : Number.NaN;
  const ownMax = Math.max(...after.flatMap((r) => r.starts.map((t, k) => t - (r.waits[k] ?? 0))));
  summary([
    ...VARIANTS.map((v) => ({
      bench: 'loop-stall',
      metric: `${v.label}: ${missions}-mission burst, longest loop stall, median of ${rounds} (ms)`,
      value: fmt(
        medianOf(v.label, (r) => r.loop.max),
        1,
      ),
    })),
    {
      bench: 'loop-stall',
      metric: 'hall spawns: one start on the loop, median / max / max less run-queue wait (ms)',
      value: `${fmt(stats(allStarts).median, 3)} / ${fmt(startMax, 3)} / ${fmt(ownMax, 3)}`,
      target: `<= ${TARGET_START_MS} ms`,
      met: ownMax <= TARGET_START_MS,
    },
  ]);
});
