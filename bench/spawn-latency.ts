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
 *            started them itself; not with --no-fork);
 *   before -- with --before DIR, the same through a hall of another build
 *            (DIR/bin/raider, e.g. `git archive main` built in DIR): an A/B
 *            of two builds in one run, against the same bare floor.
 * They are interleaved (in a rotating order) so noise hits each.
 * Both sides first run WARMUP times unmeasured: the hall is a daemon, and its
 * steady state is what a user gets; with 10 warm-up runs the measured ones
 * still included V8 compiling the hall's hot paths (~0.7 ms more per run).
 * Targets: the hall's overhead (median difference) under 3 ms, and the reply
 * to a spawn that starts at once no later than the bare floor: median frame
 * -> spawn reply <= median bare spawn -> exit, measured in the same run.
 *
 * Then (unless --no-phases) a second hall (and with --before one of the other
 * build, in turn), with bench/hall-phases-hook.mjs loaded into it, runs N/2
 * more to show where inside the hall the time goes:
 * frame read -> start asked for -> pid reported -> reply written, and exit
 * reported -> raider.done written, plus each WAL fdatasync.
 *
 *   node --import tsx bench/spawn-latency.ts [--quick] [--n N] [--no-phases] [--no-fork] [--before DIR]
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  bareSpawn,
  bareSpawnCalls,
  rssMb,
  Client,
  count,
  type HallProcess,
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
/** The spawn reply's median over the bare spawn-to-exit median, same run. */
const TARGET_REPLY_RATIO = 1.0;
const WARMUP = 200;

function argNumber(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : undefined;
}

function argString(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** A hall measured beside the main one: its spawns, timed the same way. */
interface OtherHall {
  label: string;
  hall: HallProcess;
  client: Client;
  sub: Subscription;
  total: number[];
  reply: number[];
  /** The hall process's CPU (ms) when the measured runs began. */
  cpu0: number;
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
  const openOther = async (label: string, dir: string, options: Parameters<typeof startHall>[2]): Promise<OtherHall> => {
    const other = (await startHall(tempRoot(dir), raider, options)).hall;
    const otherSub = await Subscription.open(other.socket, 'raider.done');
    return { label, hall: other, client: await Client.connect(other.socket), sub: otherSub, total: [], reply: [], cpu0: 0 };
  };
  const others: OtherHall[] = [];
  if (!process.argv.includes('--no-fork'))
    others.push(await openOther('fork-server hall', 'spawn-latency-fork', { env: { RAIDER_HALL_SPAWNER: 'fork-server' } }));
  const before = argString('--before');
  if (before !== undefined)
    others.push(await openOther(`hall of ${before}`, 'spawn-latency-before', { bin: path.join(path.resolve(before), 'bin', 'raider') }));

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
  const othersOnce = others.map((o) => through(o.client, o.sub));

  for (let i = 0; i < warmup; i++) {
    await bareOnce();
    await hallOnce();
    for (const once of othersOnce) await once();
  }

  bareCpu = 0;
  bareSpawnCalls.length = 0;
  const hallCpu0 = processCpuMs(hall.child.pid!);
  for (const o of others) o.cpu0 = processCpuMs(o.hall.child.pid!);
  const bare: number[] = [];
  const viaHall: number[] = [];
  const replyMs: number[] = [];
  const paired: number[] = [];
  for (let i = 0; i < n; i++) {
    let b = 0;
    let h = { total: 0, reply: 0 };
    const steps = [
      async () => {
        b = await bareOnce();
      },
      async () => {
        h = await hallOnce();
      },
      ...others.map((o, k) => async () => {
        const t = await othersOnce[k]!();
        o.total.push(t.total);
        o.reply.push(t.reply);
      }),
    ];
    for (let k = 0; k < steps.length; k++) await steps[(i + k) % steps.length]!();
    bare.push(b);
    viaHall.push(h.total);
    replyMs.push(h.reply);
    paired.push(h.total - b);
  }

  const hallCpu = processCpuMs(hall.child.pid!) - hallCpu0;
  const otherCpu = others.map((o) => `${o.label} ${fmt((processCpuMs(o.hall.child.pid!) - o.cpu0) / n)} ms`);
  const hallRss = rssMb(hall.child.pid!);
  const ownRss = rssMb(process.pid);
  const bareCalls = stats(bareSpawnCalls);
  client.close();
  sub.close();
  for (const o of others) {
    o.client.close();
    o.sub.close();
    await o.hall.stop();
  }
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
      ...others.flatMap((o) => [
        statsRow(`${o.label}: frame → raider.done (ms)`, stats(o.total)),
        statsRow('  of which: frame → spawn reply (ms)', stats(o.reply)),
      ]),
    ]),
  );
  const replyRatio = sr.median / sb.median;
  const otherRatios = others.map((o) => `${o.label} ${fmt(stats(o.reply).median / sb.median)}x`);
  console.log(
    `spawn reply median / bare spawn-to-exit median: hall ${fmt(sr.median)} / ${fmt(sb.median)} ms = ${fmt(replyRatio)}x (target <= ${fmt(TARGET_REPLY_RATIO, 1)}x: ${replyRatio <= TARGET_REPLY_RATIO ? 'met' : 'MISSED'})${otherRatios.map((r) => `, ${r}`).join('')}`,
  );
  console.log('');
  console.log(
    `hall overhead (median hall − median bare): ${fmt(overhead)} ms   target < ${TARGET_OVERHEAD_MS} ms: ${overhead < TARGET_OVERHEAD_MS ? 'met' : 'MISSED'}`,
  );
  console.log(`ratio median hall / median bare: ${fmt(sh.median / sb.median)}x; p90 hall / p90 bare: ${fmt(sh.p90 / sb.p90)}x`);
  console.log(
    `CPU per run: hall process ${fmt(hallCpu / n)} ms${otherCpu.map((c) => `, ${c}`).join('')}, bare spawner (this process, around each spawn) ${fmt(bareCpu / n)} ms`,
  );
  console.log(
    `bare spawn() call alone (returns after exec): median ${fmt(bareCalls.median)} ms, p90 ${fmt(bareCalls.p90)} ms; RSS: hall ${fmt(hallRss, 0)} MB, this process ${fmt(ownRss, 0)} MB`,
  );
  console.log(`hall stopped in ${fmt(stopMs, 0)} ms`);

  if (!process.argv.includes('--no-phases')) await phases(raider, Math.max(10, Math.floor(n / 2)), before);

  summary([
    { bench: 'spawn-latency', metric: `bare spawn median / p90 (ms), n=${n}`, value: `${fmt(sb.median)} / ${fmt(sb.p90)}` },
    { bench: 'spawn-latency', metric: 'hall spawn→raider.done median / p90 (ms)', value: `${fmt(sh.median)} / ${fmt(sh.p90)}` },
    {
      bench: 'spawn-latency',
      metric: `spawn reply median / bare spawn-to-exit median: hall${others.map((o) => `, ${o.label}`).join('')}`,
      value: [
        `${fmt(sr.median)} / ${fmt(sb.median)} ms = ${fmt(replyRatio)}x`,
        ...others.map((o) => `${fmt(stats(o.reply).median / sb.median)}x`),
      ].join(', '),
      target: `<= ${fmt(TARGET_REPLY_RATIO, 1)}x`,
      met: replyRatio <= TARGET_REPLY_RATIO,
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

/**
 * Sequential spawns through halls that time their own phases
 * (bench/hall-phases-hook.mjs): this build's, and with --before the other
 * build's, spawned in turn so that noise hits both.
 */
async function phases(raider: string, n: number, before: string | undefined): Promise<void> {
  const hook = new URL('./hall-phases-hook.mjs', import.meta.url).href;
  const builds = [{ label: 'this build', bin: undefined as string | undefined }];
  if (before !== undefined) builds.push({ label: `the build in ${before}`, bin: path.join(path.resolve(before), 'bin', 'raider') });
  const halls = [];
  for (const build of builds) {
    const root = tempRoot('spawn-phases');
    const outFile = path.join(root, 'phases.json');
    const { hall } = await startHall(root, raider, {
      nodeArgs: ['--import', hook],
      env: { BENCH_PHASES_OUT: outFile },
      ...(build.bin !== undefined ? { bin: build.bin } : {}),
    });
    halls.push({
      ...build,
      hall,
      outFile,
      sub: await Subscription.open(hall.socket, 'raider.done'),
      client: await Client.connect(hall.socket),
    });
  }
  const warmup = Math.min(WARMUP, n);
  for (let i = 0; i < n + warmup; i++) {
    for (let k = 0; k < halls.length; k++) {
      const h = halls[(i + k) % halls.length]!;
      const reply = await h.client.command({ cmd: 'spawn', name: 'bench', mission: 'go' });
      if (typeof reply.id !== 'string') throw new Error(`spawn answered ${JSON.stringify(reply)}`);
      await h.sub.done(reply.id);
    }
  }
  for (const h of halls) {
    h.client.close();
    h.sub.close();
    await h.hall.stop();
  }
  for (const h of halls) printPhases(h.label, JSON.parse(fs.readFileSync(h.outFile, 'utf8')) as PhaseData, warmup);
}

interface PhaseData {
  runs: PhaseRun[];
  fdatasyncs: number[];
}

function printPhases(label: string, data: PhaseData, warmup: number): void {
  const runs = data.runs
    .slice(warmup)
    .filter((r) => r.spawnStart !== undefined && r.exit !== undefined && r.done !== undefined && r.reply !== undefined);
  const col = (f: (r: PhaseRun) => number) => stats(runs.map(f));
  console.log(`\n# inside the hall of ${label} (instrumented, ${runs.length} sequential runs; the hook adds a little)`);
  console.log(
    table(STATS_HEADERS, [
      statsRow(
        'frame read → start asked for (machines, prepare: files, ledger)',
        col((r) => r.spawnStart! - r.arrive),
      ),
      statsRow(
        'start asked for → pid reported (posix_spawn)',
        col((r) => r.spawnEnd! - r.spawnStart!),
      ),
      statsRow(
        'pid reported → spawn reply written (waits for fdatasync)',
        col((r) => r.reply! - r.spawnEnd!),
      ),
      statsRow(
        'frame read → spawn reply written (the reply path)',
        col((r) => r.reply! - r.arrive),
      ),
      statsRow(
        'start asked for → exit reported',
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
