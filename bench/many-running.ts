/**
 * 200 raiders running at once in one hall: the hall's memory and CPU, and
 * how fast `ps` and `status` answer, against the same hall with nothing
 * running.
 *
 * 1. A hall with the waiting /bin/sh raider; `ps` and `status` round trips,
 *    each on a connection of its own (as the CLI does), with nothing running.
 * 2. 200 missions `wait 600` to one plain slot, pipelined over 10
 *    connections; timed until all 200 spawn replies are in.
 * 3. With the 200 running: the hall's RSS and peak RSS, its CPU over a few
 *    quiet seconds, and `ps` / `status` again.
 * 4. SIGTERM: the hall stops its 200 raiders and exits; timed.
 * Target: hall RSS under 150 MB with 200 running.
 *
 *   node --import tsx bench/many-running.ts [--quick] [--raiders N]
 */
import {
  argNumber,
  Client,
  count,
  fdCount,
  fmt,
  machine,
  nowMs,
  peakRssMb,
  processCpuMs,
  request,
  rssMb,
  runMain,
  sleep,
  startHall,
  stats,
  STATS_HEADERS,
  statsRow,
  summary,
  table,
  tempRoot,
  writeWaitingRaider,
  type Json,
  type Stats,
} from './lib.js';

const TARGET_RSS_MB = 150;
const CONNECTIONS = 10;
const QUIET_S = 3;

/** `n` rounds of ps and status, each on a fresh connection, interleaved. */
async function probe(
  socket: string,
  n: number,
): Promise<{ ps: Stats; status: Stats; psBytes: number; statusBytes: number; running: number }> {
  const ps: number[] = [];
  const status: number[] = [];
  let psBytes = 0;
  let statusBytes = 0;
  let running = -1;
  for (let i = 0; i < n; i++) {
    let t0 = nowMs();
    const p = await request(socket, { cmd: 'ps' });
    ps.push(nowMs() - t0);
    psBytes = JSON.stringify(p).length;
    t0 = nowMs();
    const s = await request(socket, { cmd: 'status' });
    status.push(nowMs() - t0);
    statusBytes = JSON.stringify(s).length;
    running = Number(s.running);
  }
  return { ps: stats(ps), status: stats(status), psBytes, statusBytes, running };
}

runMain(async () => {
  const raiders = argNumber('--raiders') ?? count(200, 50);
  const rounds = count(60, 20);
  console.log(`# many running: ${raiders} raiders at once, ${machine()}`);

  const root = tempRoot('many');
  const raider = writeWaitingRaider(tempRoot('many-bin'));
  const { hall, readyMs } = await startHall(root, raider);
  const pid = hall.child.pid!;
  console.log(`hall answered ${fmt(readyMs, 0)} ms after start`);

  const idle = await probe(hall.socket, rounds);
  const idleRss = rssMb(pid);
  const idleFds = fdCount(pid);

  // Start them all.
  const cpu0 = processCpuMs(pid);
  const t0 = nowMs();
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => Client.connect(hall.socket)));
  const replies = (
    await Promise.all(
      clients.map((c, w) => {
        const share = Math.floor(raiders / CONNECTIONS) + (w < raiders % CONNECTIONS ? 1 : 0);
        return c.pipeline(Array.from({ length: share }, (): Json => ({ cmd: 'spawn', name: 'many', mission: 'wait 600' })));
      }),
    )
  ).flat();
  const startMs = nowMs() - t0;
  const startCpu = processCpuMs(pid) - cpu0;
  for (const c of clients) c.close();
  const failed = replies.filter((r) => typeof r.pid !== 'number');
  if (failed.length > 0) throw new Error(`${failed.length} spawns failed, e.g. ${JSON.stringify(failed[0])}`);

  // Let them settle, then measure a quiet stretch.
  await sleep(1000);
  const quietCpu0 = processCpuMs(pid);
  await sleep(QUIET_S * 1000);
  const quietCpuPerS = (processCpuMs(pid) - quietCpu0) / QUIET_S;
  const busy = await probe(hall.socket, rounds);
  const busyRss = rssMb(pid);
  const peakRss = peakRssMb(pid);
  const busyFds = fdCount(pid);
  if (busy.running !== raiders) throw new Error(`status says ${busy.running} running, not ${raiders}`);

  const stopMs = await hall.stop(30_000);

  console.log('');
  console.log(
    table(STATS_HEADERS, [
      statsRow('ps, nothing running (ms)', idle.ps),
      statsRow(`ps, ${raiders} running (ms)`, busy.ps),
      statsRow('status, nothing running (ms)', idle.status),
      statsRow(`status, ${raiders} running (ms)`, busy.status),
    ]),
  );
  console.log('');
  console.log(
    table(
      ['', 'nothing running', `${raiders} running`],
      [
        ['hall RSS (MB)', fmt(idleRss, 1), fmt(busyRss, 1)],
        ['hall peak RSS (MB)', '', fmt(peakRss, 1)],
        ['hall file descriptors', String(idleFds), String(busyFds)],
        ['ps reply (bytes)', String(idle.psBytes), String(busy.psBytes)],
        ['status reply (bytes)', String(idle.statusBytes), String(busy.statusBytes)],
      ],
    ),
  );
  console.log('');
  console.log(
    `${raiders} spawns (10 connections, pipelined): all replies in ${fmt(startMs, 0)} ms, hall CPU ${fmt(startCpu / raiders, 2)} ms per spawn`,
  );
  console.log(`hall CPU with ${raiders} running and nothing asked of it: ${fmt(quietCpuPerS, 1)} ms per second`);
  console.log(
    `hall RSS with ${raiders} running: ${fmt(busyRss, 1)} MB (${fmt(busyRss - idleRss, 1)} MB over idle)  target < ${TARGET_RSS_MB} MB: ${busyRss < TARGET_RSS_MB ? 'met' : 'MISSED'}`,
  );
  console.log(`SIGTERM to exit with ${raiders} raiders to stop: ${fmt(stopMs, 0)} ms`);

  summary([
    {
      bench: 'many-running',
      metric: `${raiders} spawns pipelined: all running after (ms); hall CPU per spawn (ms)`,
      value: `${fmt(startMs, 0)}; ${fmt(startCpu / raiders, 2)}`,
    },
    {
      bench: 'many-running',
      metric: `hall RSS idle / ${raiders} running / peak (MB)`,
      value: `${fmt(idleRss, 1)} / ${fmt(busyRss, 1)} / ${fmt(peakRss, 1)}`,
      target: `< ${TARGET_RSS_MB} MB running`,
      met: busyRss < TARGET_RSS_MB,
    },
    { bench: 'many-running', metric: `hall CPU with ${raiders} running, quiet (ms/s)`, value: fmt(quietCpuPerS, 1) },
    {
      bench: 'many-running',
      metric: `ps median / p90 (ms): idle → ${raiders} running`,
      value: `${fmt(idle.ps.median)} / ${fmt(idle.ps.p90)} → ${fmt(busy.ps.median)} / ${fmt(busy.ps.p90)}`,
    },
    {
      bench: 'many-running',
      metric: `status median / p90 (ms): idle → ${raiders} running`,
      value: `${fmt(idle.status.median)} / ${fmt(idle.status.p90)} → ${fmt(busy.status.median)} / ${fmt(busy.status.p90)}`,
    },
    { bench: 'many-running', metric: `SIGTERM → hall exit with ${raiders} running (ms)`, value: fmt(stopMs, 0) },
  ]);
});
