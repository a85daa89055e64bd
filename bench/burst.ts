/**
 * A burst of missions to a plain slot (parallel runs), against the physical
 * floor: the same number of bare spawns of the same minimal raider.
 *
 *   bare        -- 10 workers, each spawning the raider (hall stdio set-up)
 *                  and waiting for its exit before the next: concurrency 10.
 *   bare all    -- every raider spawned at once, then all exits awaited: the
 *                  same work as the pipelined hall side (all runs at once).
 *   hall piped  -- 10 connections, each writing its share of `spawn` frames
 *                  in one go; timed until every raider.done has been read.
 *   hall c=10   -- 10 connections, each sending a spawn and waiting for its
 *                  raider.done before the next: the same concurrency as bare.
 *
 * The runs go bare, piped, bare all, c=10, bare, bare all, so drift in the machine's load hits
 * the sides alike; bare is the mean of its two runs. After each hall side the
 * bench waits until the hall process is idle (no CPU for 0.5 s, at most 60 s)
 * and prints how long it kept working after the last raider.done, so one
 * side's leftovers do not slow the next. Target: hall / bare <= 1.3.
 *
 * When the warm-up shows that the runs would take longer than a budget
 * (150 s, BENCH_BURST_BUDGET_S) -- a loaded machine -- the count is scaled
 * down and the output says so; an explicit --missions is always run as asked.
 *
 *   node --import tsx bench/burst.ts [--quick] [--missions N]
 */
import path from 'node:path';
import {
  bareSpawn,
  Client,
  count,
  fmt,
  hallEnv,
  hallLikeArgs,
  machine,
  nowMs,
  ownCpuMs,
  processCpuMs,
  runMain,
  startHall,
  Subscription,
  summary,
  table,
  tempRoot,
  waitIdle,
  writeMinimalRaider,
  type Json,
} from './lib.js';

const CONNECTIONS = 10;
const TARGET_RATIO = 1.3;
/** Seconds the measured runs may take; on a slower machine the count is scaled down (and says so). */
const BUDGET_S = Number(process.env.BENCH_BURST_BUDGET_S ?? 150);
/** How long to wait for the hall to go idle after a hall side. */
const IDLE_WAIT_MS = 60_000;

function argNumber(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : undefined;
}

function shares(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

runMain(async () => {
  let missions = argNumber('--missions') ?? count(1000, 200);
  console.log(`# burst: ${missions} missions, ${CONNECTIONS} connections / workers, ${machine()}`);
  // An explicit --missions is run as asked.
  const budgetS = argNumber('--missions') !== undefined ? Infinity : BUDGET_S;

  const root = tempRoot('burst');
  const bareDir = tempRoot('burst-bare');
  const raider = writeMinimalRaider(bareDir);
  const bareEnv = { ...hallEnv(raider), RAIDER_HALL_MODE: '1', RAIDER_HALL_ROOT: bareDir, RAIDER_HALL_SLOT: 'bare' };
  const bareArgs = hallLikeArgs(bareDir, 'go');

  const { hall } = await startHall(root, raider);
  const hallPid = hall.child.pid!;
  const sub = await Subscription.open(hall.socket, 'raider.done');
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => Client.connect(hall.socket)));
  const spawnFrame: Json = { cmd: 'spawn', name: 'burst', mission: 'go' };

  const checkDone = (event: Json) => {
    if (event.status !== 'completed') throw new Error(`a run ended ${JSON.stringify(event)}`);
  };

  let bareSeq = 0;
  const bare = async (n: number): Promise<number> => {
    const t0 = nowMs();
    await Promise.all(
      shares(n, CONNECTIONS).map(async (share, w) => {
        for (let i = 0; i < share; i++) {
          const file = path.join(bareDir, `bare-${w}-${bareSeq++ % 20}.events.jsonl`);
          await bareSpawn(raider, bareArgs, file, path.join(bareDir, 'bare.log'), bareEnv, bareDir);
        }
      }),
    );
    return nowMs() - t0;
  };

  const bareAll = async (n: number): Promise<number> => {
    const t0 = nowMs();
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        bareSpawn(raider, bareArgs, path.join(bareDir, `all-${i}.events.jsonl`), path.join(bareDir, 'bare.log'), bareEnv, bareDir),
      ),
    );
    return nowMs() - t0;
  };

  const piped = async (n: number): Promise<number> => {
    const t0 = nowMs();
    const replies = await Promise.all(
      shares(n, CONNECTIONS).map((share, w) => clients[w]!.pipeline(Array.from({ length: share }, () => spawnFrame))),
    );
    const ids = replies.flat().map((r) => {
      if (typeof r.id !== 'string') throw new Error(`spawn answered ${JSON.stringify(r)}`);
      return r.id;
    });
    const dones = await Promise.all(ids.map((id) => sub.done(id, 300_000)));
    for (const d of dones) checkDone(d.event);
    return Math.max(...dones.map((d) => d.at)) - t0;
  };

  const closed = async (n: number): Promise<number> => {
    const t0 = nowMs();
    await Promise.all(
      shares(n, CONNECTIONS).map(async (share, w) => {
        for (let i = 0; i < share; i++) {
          const reply = await clients[w]!.command(spawnFrame);
          if (typeof reply.id !== 'string') throw new Error(`spawn answered ${JSON.stringify(reply)}`);
          checkDone((await sub.done(reply.id, 300_000)).event);
        }
      }),
    );
    return nowMs() - t0;
  };

  // Warm-up: a few of each, which also tells how long the full runs would take.
  const warm = 20;
  const warmMs = { bare: await bare(warm), bareAll: await bareAll(warm), piped: await piped(warm), closed: await closed(warm) };
  await waitIdle(hallPid);
  const projectedS = ((missions / warm) * (2 * warmMs.bare + 2 * warmMs.bareAll + warmMs.piped + warmMs.closed)) / 1000;
  if (projectedS > budgetS) {
    // A loaded or slow machine: fewer missions, so the whole suite still ends in time.
    const scaled = Math.max(100, Math.floor((missions * budgetS) / projectedS / 10) * 10);
    console.log(
      `note: ${missions} missions would take ~${fmt(projectedS, 0)} s here (budget ${budgetS} s, BENCH_BURST_BUDGET_S); running ${scaled} instead`,
    );
    missions = scaled;
  }

  const times = { bare: [] as number[], bareAll: [] as number[], piped: [] as number[], closed: [] as number[] };
  const busyAfter: Record<string, string> = {};
  /** CPU per mission: of this process for bare spawns, of the hall process (to idle) for the hall sides. */
  const cpuPer = { bare: [] as number[], bareAll: [] as number[], piped: [] as number[], closed: [] as number[] };
  const sides = { bare, bareAll, piped, closed };
  for (const side of ['bare', 'piped', 'bareAll', 'closed', 'bare', 'bareAll'] as const) {
    const cpu0 = processCpuMs(hallPid);
    const own0 = ownCpuMs();
    const ms = await sides[side](missions);
    times[side].push(ms);
    let note = '';
    if (side === 'bare' || side === 'bareAll') {
      cpuPer[side].push((ownCpuMs() - own0) / missions);
      note = `; spawner (this process) CPU ${fmt((ownCpuMs() - own0) / missions, 1)} ms/mission`;
    } else {
      // Work the hall still does after the last raider.done (it would slow down the next side).
      const after = await waitIdle(hallPid, 500, IDLE_WAIT_MS);
      const cpu = processCpuMs(hallPid) - cpu0;
      cpuPer[side].push(cpu / missions);
      busyAfter[side] = after.idle ? `${fmt(after.busyMs / 1000, 1)} s` : `> ${fmt(IDLE_WAIT_MS / 1000, 0)} s`;
      note = `; hall CPU ${fmt(cpu / missions, 1)} ms/mission; hall still busy ${busyAfter[side]} after the last raider.done`;
    }
    console.log(`  ${side.padEnd(6)} ${missions} missions: ${fmt(ms, 0)} ms${note}`);
  }
  for (const c of clients) c.close();
  sub.close();

  const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
  const b = mean(times.bare);
  const p = mean(times.piped);
  const c = mean(times.closed);
  const a = mean(times.bareAll);
  const perSec = (ms: number) => fmt((missions / ms) * 1000, 0);
  console.log('');
  console.log(
    table(
      ['', 'runs (ms)', 'mean (ms)', 'missions/s', 'ms/mission', 'vs bare', 'CPU ms/mission'],
      [
        [
          'bare spawns, 10 workers',
          times.bare.map((x) => fmt(x, 0)).join(' / '),
          fmt(b, 0),
          perSec(b),
          fmt(b / missions, 2),
          '1.00',
          fmt(mean(cpuPer.bare), 1),
        ],
        [
          'bare spawns, all at once',
          times.bareAll.map((x) => fmt(x, 0)).join(' / '),
          fmt(a, 0),
          perSec(a),
          fmt(a / missions, 2),
          fmt(a / b),
          fmt(mean(cpuPer.bareAll), 1),
        ],
        [
          'hall, 10 conns pipelined',
          times.piped.map((x) => fmt(x, 0)).join(' / '),
          fmt(p, 0),
          perSec(p),
          fmt(p / missions, 2),
          fmt(p / b),
          fmt(mean(cpuPer.piped), 1),
        ],
        [
          'hall, 10 conns closed loop',
          times.closed.map((x) => fmt(x, 0)).join(' / '),
          fmt(c, 0),
          perSec(c),
          fmt(c / missions, 2),
          fmt(c / b),
          fmt(mean(cpuPer.closed), 1),
        ],
      ],
    ),
  );
  console.log('CPU ms/mission: of this process for the bare spawns; of the hall process, until it went idle, for the hall sides.');
  console.log('');
  console.log(`hall pipelined / bare: ${fmt(p / b)}  target <= ${TARGET_RATIO}: ${p / b <= TARGET_RATIO ? 'met' : 'MISSED'}`);
  console.log(
    `hall pipelined / bare all at once (the same work): ${fmt(p / a)}  target <= ${TARGET_RATIO}: ${p / a <= TARGET_RATIO ? 'met' : 'MISSED'}`,
  );
  console.log(
    `hall closed loop (same concurrency) / bare: ${fmt(c / b)}  target <= ${TARGET_RATIO}: ${c / b <= TARGET_RATIO ? 'met' : 'MISSED'}`,
  );
  console.log(
    `the hall kept working after the last raider.done: ${busyAfter.piped ?? '?'} after the pipelined burst, ${busyAfter.closed ?? '?'} after the closed loop`,
  );

  summary([
    { bench: 'burst', metric: `bare: ${missions} spawns, 10 workers (ms)`, value: `${fmt(b, 0)} (${perSec(b)}/s)` },
    { bench: 'burst', metric: `bare: ${missions} spawns, all at once (ms)`, value: `${fmt(a, 0)} (${perSec(a)}/s)` },
    {
      bench: 'burst',
      metric: `hall: ${missions} missions, 10 conns pipelined (ms)`,
      value: `${fmt(p, 0)} (${perSec(p)}/s) = ${fmt(p / b)}x bare, ${fmt(p / a)}x bare all at once`,
      target: `<= ${TARGET_RATIO}x`,
      met: p / b <= TARGET_RATIO,
    },
    {
      bench: 'burst',
      metric: `hall: ${missions} missions, 10 conns closed loop (ms)`,
      value: `${fmt(c, 0)} (${perSec(c)}/s) = ${fmt(c / b)}x bare`,
      target: `<= ${TARGET_RATIO}x`,
      met: c / b <= TARGET_RATIO,
    },
    {
      bench: 'burst',
      metric: 'CPU per mission: hall piped / hall closed / bare spawner (ms)',
      value: `${fmt(mean(cpuPer.piped), 1)} / ${fmt(mean(cpuPer.closed), 1)} / ${fmt(mean(cpuPer.bare), 1)}`,
    },
    {
      bench: 'burst',
      metric: 'hall busy after the last raider.done: piped / closed loop',
      value: `${busyAfter.piped ?? '?'} / ${busyAfter.closed ?? '?'}`,
    },
  ]);

  // After the figures: a hall that does not stop is worth knowing, but not at their cost.
  const stopMs = await hall.stop();
  console.log(`hall stopped in ${fmt(stopMs, 0)} ms`);
});
