/**
 * Spawn latency: one minimal raider (a /bin/sh script printing one
 * run.finished line), N times in a row,
 *   bare  -- spawned from Node with the hall's stdio set-up (stdin /dev/null,
 *            stdout to a fresh file, stderr appended to a file, detached),
 *            timed from opening the files to the exit;
 *   hall  -- through a real hall (the built CLI, RAIDER_HALL_RAIDER_BIN = the
 *            script): a `spawn` frame on the control socket, timed from
 *            sending it to reading the run's raider.done on a subscription;
 *   fork  -- the same through a hall that starts its raiders through its fork
 *            server (RAIDER_HALL_SPAWNER=fork-server, the way before the hall
 *            started them itself).
 * The three are interleaved (in a rotating order) so noise hits each.
 * Both sides first run WARMUP times unmeasured: the hall is a daemon, and its
 * steady state is what a user gets; with 10 warm-up runs the measured ones
 * still included V8 compiling the hall's hot paths (~0.7 ms more per run).
 * Target: the hall's overhead (median difference) under 3 ms.
 *
 * Then (unless --no-phases) a second hall, with bench/hall-phases-hook.mjs
 * loaded into it, runs N/2 more to show where inside the hall the time goes:
 * frame read -> request to the fork server -> pid reported -> reply written,
 * and exit reported -> raider.done written, plus each WAL fdatasync.
 *
 *   node --import tsx bench/spawn-latency.ts [--quick] [--n N] [--no-phases]
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  bareSpawn,
  bareSpawnCalls,
  rssMb,
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
  stats,
  STATS_HEADERS,
  statsRow,
  Subscription,
  summary,
  table,
  tempRoot,
  writeMinimalRaider,
} from './lib.js';

const TARGET_OVERHEAD_MS = 3;
const WARMUP = 200;

function argNumber(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : undefined;
}

runMain(async () => {
  const n = argNumber('--n') ?? count(200, 40);
  const warmup = Math.min(WARMUP, n);
  console.log(`# spawn latency: ${n} sequential runs each side (+${warmup} warm-up), ${machine()}`);

  const root = tempRoot('spawn-latency');
  const bareDir = tempRoot('spawn-latency-bare');
  const raider = writeMinimalRaider(bareDir);
  const bareEnv = {
    ...hallEnv(raider),
    RAIDER_HALL_MODE: '1',
    RAIDER_HALL_ROOT: bareDir,
    RAIDER_HALL_SLOT: 'bare',
  };
  const bareArgs = hallLikeArgs(bareDir, 'go');

  const { hall, readyMs } = await startHall(root, raider);
  console.log(`hall answered ${fmt(readyMs, 0)} ms after start`);
  const sub = await Subscription.open(hall.socket, 'raider.done');
  const client = await Client.connect(hall.socket);
  const fork = (await startHall(tempRoot('spawn-latency-fork'), raider, { env: { RAIDER_HALL_SPAWNER: 'fork-server' } })).hall;
  const forkSub = await Subscription.open(fork.socket, 'raider.done');
  const forkClient = await Client.connect(fork.socket);

  let bareSeq = 0;
  let bareCpu = 0;
  const bareOnce = async () => {
    const c0 = ownCpuMs();
    const ms = await bareSpawn(
      raider,
      bareArgs,
      path.join(bareDir, `bare-${bareSeq++ % 20}.events.jsonl`),
      path.join(bareDir, 'bare.log'),
      bareEnv,
      bareDir,
    );
    bareCpu += ownCpuMs() - c0;
    return ms;
  };

  const through = (c: Client, s: Subscription) => async (): Promise<{ total: number; reply: number }> => {
    const t0 = nowMs();
    const reply = await c.command({ cmd: 'spawn', name: 'bench', mission: 'go' });
    const tReply = nowMs();
    if (typeof reply.id !== 'string') throw new Error(`spawn answered ${JSON.stringify(reply)}`);
    const { event, at } = await s.done(reply.id);
    if (event.status !== 'completed' || event.response !== 'ok') throw new Error(`run ended ${JSON.stringify(event)}`);
    return { total: at - t0, reply: tReply - t0 };
  };
  const hallOnce = through(client, sub);
  const forkOnce = through(forkClient, forkSub);

  for (let i = 0; i < warmup; i++) {
    await bareOnce();
    await hallOnce();
    await forkOnce();
  }

  bareCpu = 0;
  bareSpawnCalls.length = 0;
  const hallCpu0 = processCpuMs(hall.child.pid!);
  const bare: number[] = [];
  const viaHall: number[] = [];
  const replyMs: number[] = [];
  const paired: number[] = [];
  const viaFork: number[] = [];
  const forkReplyMs: number[] = [];
  for (let i = 0; i < n; i++) {
    let b = 0;
    let h = { total: 0, reply: 0 };
    let f = { total: 0, reply: 0 };
    const steps = [
      async () => {
        b = await bareOnce();
      },
      async () => {
        h = await hallOnce();
      },
      async () => {
        f = await forkOnce();
      },
    ];
    for (let k = 0; k < steps.length; k++) await steps[(i + k) % steps.length]!();
    bare.push(b);
    viaHall.push(h.total);
    replyMs.push(h.reply);
    paired.push(h.total - b);
    viaFork.push(f.total);
    forkReplyMs.push(f.reply);
  }

  const hallCpu = processCpuMs(hall.child.pid!) - hallCpu0;
  const hallRss = rssMb(hall.child.pid!);
  const ownRss = rssMb(process.pid);
  const bareCalls = stats(bareSpawnCalls);
  client.close();
  sub.close();
  forkClient.close();
  forkSub.close();
  await fork.stop();
  const stopMs = await hall.stop();

  const sb = stats(bare);
  const sh = stats(viaHall);
  const sr = stats(replyMs);
  const sp = stats(paired);
  const overhead = sh.median - sb.median;
  console.log('');
  console.log(
    table(STATS_HEADERS, [
      statsRow('bare spawn → exit (ms)', sb),
      statsRow('hall spawn frame → raider.done (ms)', sh),
      statsRow('  of which: frame → spawn reply (ms)', sr),
      statsRow('paired difference hall − bare (ms)', sp),
      statsRow('fork-server hall: frame → raider.done (ms)', stats(viaFork)),
      statsRow('  of which: frame → spawn reply (ms)', stats(forkReplyMs)),
    ]),
  );
  console.log(
    `spawn reply median / bare spawn-to-exit median: hall ${fmt(sr.median / sb.median)}x, fork-server hall ${fmt(stats(forkReplyMs).median / sb.median)}x`,
  );
  console.log('');
  console.log(
    `hall overhead (median hall − median bare): ${fmt(overhead)} ms   target < ${TARGET_OVERHEAD_MS} ms: ${overhead < TARGET_OVERHEAD_MS ? 'met' : 'MISSED'}`,
  );
  console.log(`ratio median hall / median bare: ${fmt(sh.median / sb.median)}x; p90 hall / p90 bare: ${fmt(sh.p90 / sb.p90)}x`);
  console.log(`CPU per run: hall process ${fmt(hallCpu / n)} ms, bare spawner (this process, around each spawn) ${fmt(bareCpu / n)} ms`);
  console.log(
    `bare spawn() call alone (returns after exec): median ${fmt(bareCalls.median)} ms, p90 ${fmt(bareCalls.p90)} ms; RSS: hall ${fmt(hallRss, 0)} MB, this process ${fmt(ownRss, 0)} MB`,
  );
  console.log(`hall stopped in ${fmt(stopMs, 0)} ms`);

  if (!process.argv.includes('--no-phases')) await phases(raider, Math.max(10, Math.floor(n / 2)));

  summary([
    { bench: 'spawn-latency', metric: `bare spawn median / p90 (ms), n=${n}`, value: `${fmt(sb.median)} / ${fmt(sb.p90)}` },
    { bench: 'spawn-latency', metric: 'hall spawn→raider.done median / p90 (ms)', value: `${fmt(sh.median)} / ${fmt(sh.p90)}` },
    {
      bench: 'spawn-latency',
      metric: 'spawn reply median / bare spawn-to-exit median: hall, fork-server hall',
      value: `${fmt(sr.median / sb.median)}x, ${fmt(stats(forkReplyMs).median / sb.median)}x`,
      target: '<= 1.0x',
      met: sr.median <= sb.median,
    },
    { bench: 'spawn-latency', metric: 'CPU per run: hall process / bare spawner (ms)', value: `${fmt(hallCpu / n)} / ${fmt(bareCpu / n)}` },
    {
      bench: 'spawn-latency',
      metric: 'hall overhead, median difference (ms)',
      value: `${fmt(overhead)} (${fmt(sh.median / sb.median)}x)`,
      target: `< ${TARGET_OVERHEAD_MS} ms`,
      met: overhead < TARGET_OVERHEAD_MS,
    },
  ]);
});

interface PhaseRun {
  arrive: number;
  spawnStart?: number;
  spawnEnd?: number;
  reply?: number;
  exit?: number;
  done?: number;
}

/** Sequential spawns through a hall that times its own phases (bench/hall-phases-hook.mjs). */
async function phases(raider: string, n: number): Promise<void> {
  const root = tempRoot('spawn-phases');
  const outFile = path.join(root, 'phases.json');
  const hook = new URL('./hall-phases-hook.mjs', import.meta.url).href;
  const { hall } = await startHall(root, raider, { nodeArgs: ['--import', hook], env: { BENCH_PHASES_OUT: outFile } });
  const sub = await Subscription.open(hall.socket, 'raider.done');
  const client = await Client.connect(hall.socket);
  const warmup = Math.min(WARMUP, n);
  for (let i = 0; i < n + warmup; i++) {
    const reply = await client.command({ cmd: 'spawn', name: 'bench', mission: 'go' });
    if (typeof reply.id !== 'string') throw new Error(`spawn answered ${JSON.stringify(reply)}`);
    await sub.done(reply.id);
  }
  client.close();
  sub.close();
  await hall.stop();
  const data = JSON.parse(fs.readFileSync(outFile, 'utf8')) as { runs: PhaseRun[]; fdatasyncs: number[] };
  const runs = data.runs
    .slice(warmup)
    .filter((r) => r.spawnStart !== undefined && r.exit !== undefined && r.done !== undefined && r.reply !== undefined);
  const col = (f: (r: PhaseRun) => number) => stats(runs.map(f));
  console.log(`\n# inside the hall (instrumented hall, ${runs.length} sequential runs; the hook adds a little)`);
  console.log(
    table(STATS_HEADERS, [
      statsRow(
        'frame read → request to the fork server (prepare: files, ledger)',
        col((r) => r.spawnStart! - r.arrive),
      ),
      statsRow(
        'request → pid reported (fork+exec in the fork server)',
        col((r) => r.spawnEnd! - r.spawnStart!),
      ),
      statsRow(
        'pid reported → spawn reply written (waits for fdatasync)',
        col((r) => r.reply! - r.spawnEnd!),
      ),
      statsRow(
        'request → exit reported',
        col((r) => r.exit! - r.spawnStart!),
      ),
      statsRow(
        'exit reported → raider.done written (reap)',
        col((r) => r.done! - r.exit!),
      ),
      statsRow(
        'frame read → raider.done written',
        col((r) => r.done! - r.arrive),
      ),
      statsRow('WAL fdatasync (all, ms)', stats(data.fdatasyncs)),
    ]),
  );
  const perRun = data.fdatasyncs.length / Math.max(1, data.runs.length);
  console.log(`WAL fdatasyncs per run: ${fmt(perRun, 1)}`);
}
