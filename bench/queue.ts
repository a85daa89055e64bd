/**
 * A long queue on a busy numbered slot.
 *
 * 1. `1q` is occupied by a raider that waits (mission `wait 600`).
 * 2. Floor: 2,000 round trips of a command the hall answers at once (an
 *    unknown one: `{"error": ...}`) from 10 connections, each waiting for its
 *    reply before sending the next -- the control socket's own cost.
 * 3. 10,000 `spawn`s to `1q` the same way (10 connections, 1,000 each): the
 *    enqueue rate, and the time per mission of the last 1,000 against the
 *    first 1,000 (target ratio <= 1.5: a long queue must not slow each
 *    mission down).
 * 4. SIGTERM the hall; count the entries of `.raider-hall/state/1q.queue.json`.
 * 5. Start the hall again with those 10,000 waiting, timed until `status`
 *    answers (target < 2 s), side by side with the start of a hall on an
 *    empty root; then check that the 10,000 missions are all still there
 *    (in the queue file, or the one the restarted hall took off it to run).
 *
 *   node --import tsx bench/queue.ts [--quick] [--missions N]
 */
import fs from 'node:fs';
import path from 'node:path';
import {
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
} from './lib.js';

const SLOT = '1q';
const CONNECTIONS = 10;
const TARGET_RATIO = 1.5;
const TARGET_RESTART_MS = 2000;

function argNumber(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : undefined;
}

interface Sample {
  /** Global send order. */
  index: number;
  sent: number;
  replied: number;
}

/** `total` commands from CONNECTIONS connections, each waiting for its reply before the next. */
async function closedLoop(socket: string, total: number, payload: () => Json, check: (reply: Json) => void): Promise<{ samples: Sample[]; start: number; end: number }> {
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => Client.connect(socket)));
  const samples: Sample[] = [];
  let next = 0;
  const start = nowMs();
  await Promise.all(
    clients.map(async (client) => {
      while (next < total) {
        const index = next++;
        const sent = nowMs();
        const reply = await client.command(payload());
        const replied = nowMs();
        check(reply);
        samples.push({ index, sent, replied });
      }
    }),
  );
  const end = nowMs();
  for (const c of clients) c.close();
  return { samples, start, end };
}

function queueFileEntries(root: string): number {
  const file = path.join(root, '.raider-hall', 'state', `${SLOT}.queue.json`);
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(parsed)) throw new Error(`${file} is not a JSON array`);
  return parsed.length;
}

runMain(async () => {
  const missions = argNumber('--missions') ?? count(10_000, 2_000);
  const windowSize = Math.max(1, Math.floor(missions / 10));
  console.log(`# queue: ${missions} missions to busy ${SLOT} from ${CONNECTIONS} connections, ${machine()}`);

  const root = tempRoot('queue');
  const raider = writeWaitingRaider(tempRoot('queue-bin'));
  const { hall, readyMs: firstStartMs } = await startHall(root, raider);

  const occupant = await request(hall.socket, { cmd: 'spawn', name: SLOT, mission: 'wait 600' });
  if (typeof occupant.pid !== 'number') throw new Error(`the occupant did not start: ${JSON.stringify(occupant)}`);
  console.log(`occupant ${String(occupant.id)} (pid ${occupant.pid}) holds ${SLOT}`);

  // The floor: the same closed loop with a command the hall answers without work.
  const floorCount = Math.min(2000, missions);
  const floor = await closedLoop(hall.socket, floorCount, () => ({ cmd: 'bench-no-such-command' }), (r) => {
    if (typeof r.error !== 'string') throw new Error(`floor command answered ${JSON.stringify(r)}`);
  });

  let depth = 0;
  const enqueue = await closedLoop(hall.socket, missions, () => ({ cmd: 'spawn', name: SLOT, mission: 'wait 600' }), (r) => {
    if (r.queued !== 1) throw new Error(`spawn to ${SLOT} was not queued: ${JSON.stringify(r)}`);
    depth = Math.max(depth, Number(r.queue_depth));
  });
  const enqueueMs = enqueue.end - enqueue.start;
  const rate = (missions / enqueueMs) * 1000;
  const floorRate = (floorCount / (floor.end - floor.start)) * 1000;

  // Per-mission time by windows of completions, and latencies by send order.
  const done = enqueue.samples.map((s) => s.replied).sort((a, b) => a - b);
  const windowMs = (from: number, to: number) => (done[to - 1]! - (from === 0 ? enqueue.start : done[from - 1]!)) / (to - from);
  const firstPer = windowMs(0, windowSize);
  const lastPer = windowMs(missions - windowSize, missions);
  const bySend = [...enqueue.samples].sort((a, b) => a.index - b.index);
  const firstLat = stats(bySend.slice(0, windowSize).map((s) => s.replied - s.sent));
  const lastLat = stats(bySend.slice(-windowSize).map((s) => s.replied - s.sent));
  const floorLat = stats(floor.samples.map((s) => s.replied - s.sent));
  const ratio = lastPer / firstPer;

  const statusWithQueue = await request(hall.socket, { cmd: 'status' });
  const liveDepth = Number((statusWithQueue.queues as Json | undefined)?.[SLOT]);

  console.log('');
  console.log(
    table(STATS_HEADERS, [
      statsRow(`floor: unknown command round trip (ms), ${floorCount}`, floorLat),
      statsRow(`spawn → queued reply, first ${windowSize} sent (ms)`, firstLat),
      statsRow(`spawn → queued reply, last ${windowSize} sent (ms)`, lastLat),
    ]),
  );
  console.log('');
  console.log(`enqueue: ${missions} in ${fmt(enqueueMs, 0)} ms = ${fmt(rate, 0)} missions/s (floor ${fmt(floorRate, 0)} round trips/s; ${fmt(floorRate / rate)}x)`);
  console.log(`time per mission (wall time of a window / its size): first ${windowSize} ${fmt(firstPer, 3)} ms, last ${windowSize} ${fmt(lastPer, 3)} ms`);
  const windows: string[] = [];
  for (let from = 0; from + windowSize <= missions; from += windowSize) windows.push(fmt(windowMs(from, from + windowSize), 2));
  console.log(`time per mission by window of ${windowSize} (ms): ${windows.join('  ')}`);
  console.log(`ratio last/first: ${fmt(ratio)}  target <= ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'}`);
  console.log(`highest queue_depth answered: ${depth}; status says ${liveDepth} waiting`);

  // Stop with the queue full.
  const stopMs = await hall.stop();
  const atStop = queueFileEntries(root);
  console.log(`\nSIGTERM: hall gone in ${fmt(stopMs, 0)} ms; ${SLOT}.queue.json holds ${atStop} entries (expected ${missions}): ${atStop === missions ? 'ok' : 'WRONG'}`);

  // Restart, against the start of a hall on an empty root before and after.
  const emptyStart = async () => {
    const r = tempRoot('queue-empty');
    const started = await startHall(r, raider);
    await started.hall.stop();
    return started.readyMs;
  };
  const empty1 = await emptyStart();
  const restarted = await startHall(root, raider);
  const restartMs = restarted.readyMs;
  const empty2 = await emptyStart();
  const emptyMs = (empty1 + empty2) / 2;

  // The restarted hall starts the head of the queue at once: one run, the rest wait.
  let status: Json = {};
  let inFile = -1;
  const deadline = nowMs() + 5000;
  for (;;) {
    status = await request(restarted.hall.socket, { cmd: 'status' });
    const waiting = Number((status.queues as Json | undefined)?.[SLOT] ?? 0);
    inFile = queueFileEntries(root);
    // The file of a long queue is rewritten a little later than the queue changes.
    if (inFile === waiting || nowMs() > deadline) break;
    await sleep(50);
  }
  const waiting = Number((status.queues as Json | undefined)?.[SLOT] ?? 0);
  const running = Number(status.running ?? 0);
  const accounted = inFile + running;
  const allThere = accounted === missions && inFile === waiting;
  console.log(
    `restart with ${atStop} waiting: status answered after ${fmt(restartMs, 0)} ms (empty root: ${fmt(empty1, 0)} / ${fmt(empty2, 0)} ms; ${fmt(restartMs / emptyMs)}x)  target < ${TARGET_RESTART_MS} ms: ${restartMs < TARGET_RESTART_MS ? 'met' : 'MISSED'}`,
  );
  console.log(
    `after the restart: ${SLOT}.queue.json holds ${inFile} entries, status says ${waiting} waiting and ${running} running (the queue's head, started by the new hall): ${accounted} of ${missions} missions accounted for: ${allThere ? 'ok' : 'WRONG'}`,
  );
  await restarted.hall.stop();
  console.log(`(first start of the hall on the fresh root: ${fmt(firstStartMs, 0)} ms)`);

  summary([
    { bench: 'queue', metric: `floor: no-op command round trips/s, 10 conns`, value: fmt(floorRate, 0) },
    { bench: 'queue', metric: `enqueue rate (missions/s), ${missions} to busy ${SLOT}`, value: `${fmt(rate, 0)} (${fmt(rate / floorRate)}x floor)` },
    {
      bench: 'queue',
      metric: `per-mission time last ${windowSize} / first ${windowSize}`,
      value: `${fmt(lastPer, 3)} / ${fmt(firstPer, 3)} ms = ${fmt(ratio)}`,
      target: `<= ${TARGET_RATIO}`,
      met: ratio <= TARGET_RATIO,
    },
    {
      bench: 'queue',
      metric: `restart with ${atStop} waiting until status answers (ms)`,
      value: `${fmt(restartMs, 0)} (empty root ${fmt(emptyMs, 0)}; ${fmt(restartMs / emptyMs)}x)`,
      target: `< ${TARGET_RESTART_MS} ms`,
      met: restartMs < TARGET_RESTART_MS,
    },
    {
      bench: 'queue',
      metric: 'queue file entries at stop / after restart (+ running)',
      value: `${atStop} / ${inFile} + ${running}`,
      target: `${missions} / ${missions}`,
      met: atStop === missions && allThere,
    },
  ]);
});
