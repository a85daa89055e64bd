/**
 * A long queue on a busy numbered slot, one connection.
 *
 * 1. `1q` is occupied by a raider that waits (mission `wait 600`).
 * 2. Floor: append+fdatasync of one spawn-sized line to a file in the hall's
 *    state directory, the cost of the write-ahead log alone, measured in the
 *    same run on the same disk.
 * 3. Sequential: 10,000 `spawn`s to `1q` on one connection, each waiting for
 *    its reply before the next: spawns/s (target >= 2,000), and the median
 *    reply of the last 1,000 against the first 1,000 (target <= 1.1x: a long
 *    queue must not slow each mission down).
 * 4. Pipelined: 10,000 more on one connection, all written at once:
 *    spawns/s (target >= 10,000).
 * 5. More pipelined batches until `--waiting` missions wait (100,000; 20,000
 *    with --quick): the hall's RSS with them waiting (target <= 250 MiB).
 * 6. SIGTERM the hall; count the entries of `.raider-hall/state/1q.queue.json`.
 * 7. Start the hall again with those waiting, timed until it is ready to
 *    serve: until it answers `ps`, which does not list the queue (target
 *    <= 2 s), side by side with the start of a hall on an empty root. Then,
 *    timed apart, the first `status` (its reply names every waiting mission:
 *    megabytes) and the check that every mission is still there.
 * 0. Before all that, while the queue is short: spawns to the plain slot `q`
 *    that start at once, one at a time, their reply (which carries the pid)
 *    against a bare spawn of the same raider to its exit, interleaved (target:
 *    median reply <= median bare spawn).
 *
 *   node --import tsx bench/queue.ts [--quick] [--missions N] [--waiting N] [--started N]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  argNumber,
  bareSpawn,
  hallEnv,
  hallLikeArgs,
  rssMb,
  peakRssMb,
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
  STATS_HEADERS,
  statsRow,
  summary,
  table,
  tempRoot,
  writeWaitingRaider,
  type Json,
  type Stats,
} from './lib.js';

const SLOT = '1q';
const WINDOW = 1000;
const TARGET_SEQUENTIAL = 2000;
const TARGET_PIPELINED = 10_000;
const TARGET_RATIO = 1.1;
const TARGET_RESTART_MS = 2000;
const TARGET_RSS_MIB = 250;
/** Ready to serve: a command that answers without listing the queue. */
const READY_PROBE: Json = { cmd: 'ps' };
/** Pipelined spawns are sent in batches of this many while the queue is filled up to --waiting. */
const FILL_BATCH = 10_000;

function queueFileEntries(root: string): number {
  const file = path.join(root, '.raider-hall', 'state', `${SLOT}.queue.json`);
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(parsed)) throw new Error(`${file} is not a JSON array`);
  return parsed.length;
}

/** The write-ahead log's floor: `n` appends of one line, each followed by fdatasync. */
function appendSyncFloor(dir: string, n: number): { perSecond: number; latencies: number[] } {
  const file = path.join(dir, 'bench-floor.jsonl');
  const line = Buffer.from(
    `${JSON.stringify({ op: 'queue', queue: { kind: 'slot', slot: SLOT }, entry: { id: 'm-0123456789abcdef', name: SLOT, mission: 'wait 600' } })}\n`,
  );
  const fd = fs.openSync(file, 'a', 0o600);
  const latencies: number[] = [];
  const start = nowMs();
  try {
    for (let i = 0; i < n; i++) {
      const t = nowMs();
      fs.writeSync(fd, line);
      fs.fdatasyncSync(fd);
      latencies.push(nowMs() - t);
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  return { perSecond: (n / (nowMs() - start)) * 1000, latencies };
}

/**
 * The protocol's floor: what a sequential spawn must wait for and nothing
 * else. A separate Node process (as the hall is) serves one line per request
 * on a UNIX socket: it writes the line to a file, fdatasyncs it and answers
 * one line. The bench's client sends `n` requests one at a time on one
 * connection. Two ways:
 * - `pool`: appends, and fdatasyncs through libuv's thread pool (as the
 *   hall's log does on a slow disk);
 * - `hall`: the hall's own way on a fast disk: the line is written over zero
 *   padding the file already holds (no size change to commit) and synced on
 *   the event loop. No server can answer a sequential spawn durably with
 *   fewer system calls.
 */
const ROUND_TRIP_SERVER = `
const fs = require('node:fs');
const net = require('node:net');
const [socket, file, way] = process.argv.slice(1);
const hallWay = way === 'hall';
const fd = fs.openSync(file, hallWay ? 'w+' : 'a', 0o600);
let position = 0;
if (hallWay) {
  fs.writeSync(fd, Buffer.alloc(8 << 20));
  fs.fsyncSync(fd);
}
net.createServer((conn) => {
  let buffered = '';
  conn.on('data', (chunk) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\\n')) >= 0) {
      const line = buffered.slice(0, nl + 1);
      buffered = buffered.slice(nl + 1);
      if (!hallWay) {
        fs.writeSync(fd, line);
        fs.fdatasync(fd, (err) => conn.write(err ? '{"error":1}\\n' : '{"ok":1}\\n'));
        continue;
      }
      const data = Buffer.from(line);
      fs.writeSync(fd, data, 0, data.length, position);
      position += data.length;
      fs.fdatasyncSync(fd);
      conn.write('{"ok":1}\\n');
    }
  });
}).listen(socket, () => process.stdout.write('ready\\n'));
`;

async function roundTripFloor(dir: string, n: number, way: 'pool' | 'hall'): Promise<{ perSecond: number; latencies: number[] }> {
  const socket = path.join(dir, 'floor.sock');
  const file = path.join(dir, 'bench-round-trip.jsonl');
  const server = spawn(process.execPath, ['-e', ROUND_TRIP_SERVER, socket, file, way], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('exit', (code) => reject(new Error(`the round-trip floor's server exited (${code})`)));
      server.stdout?.once('data', () => resolve());
    });
    const client = await Client.connect(socket);
    const latencies: number[] = [];
    const start = nowMs();
    try {
      for (let i = 0; i < n; i++) {
        const t = nowMs();
        await client.command(spawnPayload());
        latencies.push(nowMs() - t);
      }
    } finally {
      client.close();
    }
    return { perSecond: (n / (nowMs() - start)) * 1000, latencies };
  } finally {
    server.kill('SIGKILL');
    fs.rmSync(file, { force: true });
    fs.rmSync(socket, { force: true });
  }
}

function expectQueued(reply: Json): void {
  if (reply.queued !== 1) throw new Error(`spawn to ${SLOT} was not queued: ${JSON.stringify(reply)}`);
}

const spawnPayload = (): Json => ({ cmd: 'spawn', name: SLOT, mission: 'wait 600' });

/**
 * Spawns to the plain slot `q` (each starts at once; the raider finishes at
 * once), one at a time, each reply timed, interleaved with bare spawns of the
 * same raider run to their exit. A tenth of `n` first, unmeasured, as warm-up.
 */
async function startedAgainstBare(socket: string, raider: string, n: number): Promise<{ reply: Stats; bare: Stats }> {
  const bareDir = tempRoot('queue-bare');
  const bareEnv = { ...hallEnv(raider), RAIDER_HALL_MODE: '1', RAIDER_HALL_ROOT: bareDir, RAIDER_HALL_SLOT: 'bare' };
  const bareArgs = hallLikeArgs(bareDir, 'go');
  const client = await Client.connect(socket);
  const replies: number[] = [];
  const bares: number[] = [];
  const warmup = Math.ceil(n / 10);
  try {
    for (let i = 0; i < warmup + n; i++) {
      const bare = await bareSpawn(
        raider,
        bareArgs,
        path.join(bareDir, `bare-${i % 20}.events.jsonl`),
        path.join(bareDir, 'bare.log'),
        bareEnv,
        bareDir,
      );
      const t0 = nowMs();
      const reply = await client.command({ cmd: 'spawn', name: 'q', mission: 'go' });
      const ms = nowMs() - t0;
      if (typeof reply.pid !== 'number') throw new Error(`spawn to q did not start: ${JSON.stringify(reply)}`);
      if (i < warmup) continue;
      bares.push(bare);
      replies.push(ms);
    }
  } finally {
    client.close();
  }
  return { reply: stats(replies), bare: stats(bares) };
}

runMain(async () => {
  const missions = argNumber('--missions') ?? count(10_000, 2_000);
  const waitingTarget = Math.max(2 * missions, argNumber('--waiting') ?? count(100_000, 20_000));
  const startedRuns = argNumber('--started') ?? count(200, 50);
  const windowSize = Math.min(WINDOW, Math.max(1, Math.floor(missions / 10)));
  console.log(`# queue: ${missions} missions to busy ${SLOT} on one connection, sequential then pipelined, ${machine()}`);

  const root = tempRoot('queue');
  const raider = writeWaitingRaider(tempRoot('queue-bin'));
  const { hall, readyMs: firstStartMs } = await startHall(root, raider);

  const occupant = await request(hall.socket, { cmd: 'spawn', name: SLOT, mission: 'wait 600' });
  if (typeof occupant.pid !== 'number') throw new Error(`the occupant did not start: ${JSON.stringify(occupant)}`);
  console.log(`occupant ${String(occupant.id)} (pid ${occupant.pid}) holds ${SLOT}`);

  const startNow = await startedAgainstBare(hall.socket, raider, startedRuns);

  const stateDir = path.join(root, '.raider-hall', 'state');
  const floorRuns = Math.min(2000, missions);
  const floor = appendSyncFloor(stateDir, floorRuns);
  const tripFloor = await roundTripFloor(stateDir, floorRuns, 'pool');
  const hallWayFloor = await roundTripFloor(stateDir, floorRuns, 'hall');

  const client = await Client.connect(hall.socket);
  const latencies: number[] = [];
  const seqStart = nowMs();
  for (let i = 0; i < missions; i++) {
    const sent = nowMs();
    expectQueued(await client.command(spawnPayload()));
    latencies.push(nowMs() - sent);
  }
  const seqMs = nowMs() - seqStart;
  const seqRate = (missions / seqMs) * 1000;
  const first = stats(latencies.slice(0, windowSize));
  const last = stats(latencies.slice(-windowSize));
  const ratio = last.median / first.median;

  const pipeStart = nowMs();
  const replies = await client.pipeline(Array.from({ length: missions }, spawnPayload));
  const pipeMs = nowMs() - pipeStart;
  for (const r of replies) expectQueued(r);
  const pipeRate = (missions / pipeMs) * 1000;
  // Fill the queue up to --waiting, in pipelined batches, and take the hall's memory with them all waiting.
  let total = 2 * missions;
  const fillStart = nowMs();
  while (total < waitingTarget) {
    const batch = Math.min(FILL_BATCH, waitingTarget - total);
    for (const r of await client.pipeline(Array.from({ length: batch }, spawnPayload))) expectQueued(r);
    total += batch;
  }
  const fillMs = nowMs() - fillStart;
  client.close();
  const hallPid = hall.child.pid ?? 0;
  const rssWaiting = rssMb(hallPid);
  const peakWaiting = peakRssMb(hallPid);

  console.log('');
  console.log(
    table(STATS_HEADERS, [
      statsRow('floor: append + fdatasync of one line (ms)', stats(floor.latencies), 3),
      statsRow('floor: socket round trip with append + fdatasync (ms)', stats(tripFloor.latencies), 3),
      statsRow("floor: socket round trip, the hall's way: write over padding + fdatasync (ms)", stats(hallWayFloor.latencies), 3),
      // All of them: a mean well above the median is time lost in slow replies (checkpoints, GC), not in the common one.
      statsRow(`spawn → queued reply, all ${missions} (ms)`, stats(latencies), 3),
      statsRow(`spawn → queued reply, first ${windowSize} (ms)`, first, 3),
      statsRow(`spawn → queued reply, last ${windowSize} of ${missions} (ms)`, last, 3),
    ]),
  );
  console.log('');
  console.log(
    `floor: ${fmt(floor.perSecond, 0)} append+fdatasync/s; ${fmt(tripFloor.perSecond, 0)}/s as socket round trips; ${fmt(hallWayFloor.perSecond, 0)}/s as round trips the hall's way`,
  );
  console.log(
    `sequential: ${missions} in ${fmt(seqMs, 0)} ms = ${fmt(seqRate, 0)} spawns/s  target >= ${TARGET_SEQUENTIAL}: ${seqRate >= TARGET_SEQUENTIAL ? 'met' : 'MISSED'}`,
  );
  console.log(
    `median reply last/first ${windowSize}: ${fmt(ratio)}  target <= ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'}`,
  );
  console.log(
    `pipelined: ${missions} in ${fmt(pipeMs, 0)} ms = ${fmt(pipeRate, 0)} spawns/s  target >= ${TARGET_PIPELINED}: ${pipeRate >= TARGET_PIPELINED ? 'met' : 'MISSED'}`,
  );

  console.log(
    `filled to ${total} waiting in ${fmt(fillMs, 0)} ms (${fmt(((total - 2 * missions) / fillMs) * 1000, 0)} spawns/s pipelined); hall RSS ${fmt(rssWaiting, 1)} MiB (peak ${fmt(peakWaiting, 1)})  target <= ${TARGET_RSS_MIB}: ${rssWaiting <= TARGET_RSS_MIB ? 'met' : 'MISSED'}`,
  );
  console.log(
    `spawn that starts at once: reply median ${fmt(startNow.reply.median, 2)} ms (p90 ${fmt(startNow.reply.p90, 2)}), bare spawn to exit ${fmt(startNow.bare.median, 2)} ms (p90 ${fmt(startNow.bare.p90, 2)}), n=${startNow.reply.n}: ${fmt(startNow.reply.median / startNow.bare.median)}x  target <= 1: ${startNow.reply.median <= startNow.bare.median ? 'met' : 'MISSED'}`,
  );

  // Stop with the queue full.
  const stopMs = await hall.stop();
  const atStop = queueFileEntries(root);
  console.log(
    `\nSIGTERM: hall gone in ${fmt(stopMs, 0)} ms; ${SLOT}.queue.json holds ${atStop} entries (expected ${total}): ${atStop === total ? 'ok' : 'WRONG'}`,
  );

  // Restart, against the start of a hall on an empty root before and after.
  const emptyStart = async () => {
    const r = tempRoot('queue-empty');
    const started = await startHall(r, raider, { probe: READY_PROBE });
    await started.hall.stop();
    return started.readyMs;
  };
  const empty1 = await emptyStart();
  const restarted = await startHall(root, raider, { timeoutMs: 120_000, probe: READY_PROBE });
  const restartMs = restarted.readyMs;
  const empty2 = await emptyStart();
  const emptyMs = (empty1 + empty2) / 2;

  // The restarted hall starts the head of the queue at once: one run, the rest wait.
  const statusStart = nowMs();
  let status = await request(restarted.hall.socket, { cmd: 'status' }, 60_000);
  const firstStatusMs = nowMs() - statusStart;
  let inFile = -1;
  const deadline = nowMs() + 30_000;
  for (;;) {
    const waiting = Number((status.queues as Json | undefined)?.[SLOT] ?? 0);
    inFile = queueFileEntries(root);
    // The queue file is a checkpoint: it follows the queue within a bounded delay.
    if (inFile === waiting || nowMs() > deadline) break;
    await sleep(50);
    status = await request(restarted.hall.socket, { cmd: 'status' }, 60_000);
  }
  const waiting = Number((status.queues as Json | undefined)?.[SLOT] ?? 0);
  const running = Number(status.running ?? 0);
  const accounted = inFile + running;
  const allThere = accounted === total && inFile === waiting;
  console.log(
    `restart with ${atStop} waiting: ready (ps answered) after ${fmt(restartMs, 0)} ms (empty root: ${fmt(empty1, 0)} / ${fmt(empty2, 0)} ms; ${fmt(restartMs / emptyMs)}x)  target <= ${TARGET_RESTART_MS} ms: ${restartMs <= TARGET_RESTART_MS ? 'met' : 'MISSED'}; then the first status (every waiting id) in ${fmt(firstStatusMs, 0)} ms`,
  );
  console.log(
    `after the restart: ${SLOT}.queue.json holds ${inFile}, status says ${waiting} waiting and ${running} running: ${accounted} of ${total} accounted for: ${allThere ? 'ok' : 'WRONG'}`,
  );
  const rssRestarted = rssMb(restarted.hall.child.pid ?? 0);
  console.log(`hall RSS after the restart with ${atStop} waiting: ${fmt(rssRestarted, 1)} MiB`);
  await restarted.hall.stop();
  console.log(`(first start of the hall on the fresh root: ${fmt(firstStartMs, 0)} ms)`);

  summary([
    { bench: 'queue', metric: 'floor: append+fdatasync/s (one line, state dir)', value: fmt(floor.perSecond, 0) },
    {
      bench: 'queue',
      metric: 'floor: socket round trips/s, each an append + fdatasync (one connection, one at a time)',
      value: fmt(tripFloor.perSecond, 0),
    },
    {
      bench: 'queue',
      metric: "floor: socket round trips/s the hall's way, each a write over padding + fdatasync on the event loop",
      value: fmt(hallWayFloor.perSecond, 0),
    },
    {
      bench: 'queue',
      metric: `sequential spawns/s, ${missions} to busy ${SLOT}, one connection`,
      value: `${fmt(seqRate, 0)} (${fmt(seqRate / floor.perSecond)}x floor, ${fmt(seqRate / tripFloor.perSecond)}x round-trip floor, ${fmt(seqRate / hallWayFloor.perSecond)}x the hall's-way floor)`,
      target: `>= ${TARGET_SEQUENTIAL}`,
      met: seqRate >= TARGET_SEQUENTIAL,
    },
    {
      bench: 'queue',
      metric: `pipelined spawns/s, ${missions} more, one connection`,
      value: fmt(pipeRate, 0),
      target: `>= ${TARGET_PIPELINED}`,
      met: pipeRate >= TARGET_PIPELINED,
    },
    {
      bench: 'queue',
      metric: `hall RSS with ${total} waiting (MiB): filled / after restart`,
      value: `${fmt(rssWaiting, 1)} / ${fmt(rssRestarted, 1)}`,
      target: `<= ${TARGET_RSS_MIB}`,
      met: Math.max(rssWaiting, rssRestarted) <= TARGET_RSS_MIB,
    },
    {
      bench: 'queue',
      metric: `spawn that starts at once: reply / bare spawn to exit, median (ms), n=${startNow.reply.n}`,
      value: `${fmt(startNow.reply.median)} / ${fmt(startNow.bare.median)} = ${fmt(startNow.reply.median / startNow.bare.median)}x`,
      target: '<= 1x',
      met: startNow.reply.median <= startNow.bare.median,
    },
    {
      bench: 'queue',
      metric: `median reply last ${windowSize} / first ${windowSize}`,
      value: `${fmt(last.median, 3)} / ${fmt(first.median, 3)} ms = ${fmt(ratio)}`,
      target: `<= ${TARGET_RATIO}`,
      met: ratio <= TARGET_RATIO,
    },
    {
      bench: 'queue',
      metric: `restart with ${atStop} waiting until ready (ps answers) (ms)`,
      value: `${fmt(restartMs, 0)} (empty root ${fmt(emptyMs, 0)}; ${fmt(restartMs / emptyMs)}x)`,
      target: `<= ${TARGET_RESTART_MS} ms`,
      met: restartMs <= TARGET_RESTART_MS,
    },
    {
      bench: 'queue',
      metric: 'queue file entries at stop / after restart (+ running)',
      value: `${atStop} / ${inFile} + ${running}`,
      target: `${total} / ${total}`,
      met: atStop === total && allThere,
    },
  ]);
});
