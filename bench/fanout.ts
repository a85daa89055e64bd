/**
 * Event-bus fan-out: 100 subscribers on one hall.
 *
 * Events come from missions queued on a busy numbered slot (one
 * `raider.queued` each, ~170 bytes), which the hall can make quickly.
 *
 * 1. Floor: a burst of M missions (10 connections, pipelined) with nobody
 *    subscribed, timed until every reply is in.
 * 2. Throughput: the same burst with 100 subscribers that read; timed until
 *    the last subscriber has the last event: events delivered per second,
 *    and the spread between the first and the last subscriber to get each
 *    event.
 * 3. Latency: missions queued one at a time (the next once every subscriber
 *    has the last), with 100 readers; time from sending the spawn to each
 *    subscriber reading its event.
 * 4. The same with one subscriber that never reads, while runs whose
 *    `raider.done` carries 256 KB go on beside: the readers must not notice
 *    it, and the hall must drop it (and log why) once 8 MiB wait for it. The
 *    fat events go to the stalled subscriber and 9 of the readers; the other
 *    90 read `raider.queued` only, so the bench itself is not the bottleneck.
 *
 *   node --import tsx bench/fanout.ts [--quick] [--missions M]
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  argNumber,
  Client,
  count,
  fmt,
  machine,
  nowMs,
  processCpuMs,
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
  type HallProcess,
  type Json,
} from './lib.js';

const SUBSCRIBERS = 100;
const CONNECTIONS = 10;
const FAT_KB = 256;
const DROP_LINE = 'event subscriber dropped';

/** A raider that waits (`wait N`), prints a fat result (`fat`), or finishes at once. */
function writeFanoutRaider(dir: string): string {
  const fat = path.join(dir, 'fat-finished.jsonl');
  fs.writeFileSync(
    fat,
    `${JSON.stringify({ elapsed: 0, response: 'f'.repeat(FAT_KB * 1024), seq: 1, status: 'completed', time: 0, type: 'run.finished', version: 1 })}\n`,
  );
  const finished = '{"elapsed":0,"response":"ok","seq":1,"status":"completed","time":0,"type":"run.finished","version":1}';
  const file = path.join(dir, 'fanout-raider.sh');
  fs.writeFileSync(
    file,
    [
      '#!/bin/sh',
      'for a; do m=$a; done',
      'case $m in',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion for the fake raider script, not a JS template
      "  'wait '*) trap 'kill $s 2>/dev/null; exit 143' TERM INT; sleep \"${m#wait }\" & s=$!; wait $s ;;",
      `  fat) exec cat '${fat}' ;;`,
      'esac',
      `printf '%s\\n' '${finished}'`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return file;
}

/** One subscriber: counts what it reads; remembers when each raider.queued arrived (by mission id). */
class Reader {
  readonly arrivals = new Map<string, number>();
  lines = 0;
  bytes = 0;
  closed = false;
  private parts: Buffer[] = [];
  private onArrival: ((missionId: string) => void) | null = null;

  private constructor(readonly socket: net.Socket) {}

  static open(socketPath: string, filter: string, stalled = false): Promise<Reader> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(socketPath);
      const reader = new Reader(socket);
      let ready = false;
      socket.on('data', (chunk: Buffer) => {
        const at = nowMs();
        reader.bytes += chunk.length;
        let nl = chunk.indexOf(0x0a);
        while (nl >= 0) {
          const line = reader.parts.length > 0 ? Buffer.concat([...reader.parts, chunk.subarray(0, nl)]) : chunk.subarray(0, nl);
          reader.parts = [];
          chunk = chunk.subarray(nl + 1);
          nl = chunk.indexOf(0x0a);
          if (!ready) {
            // The reply to the status sent after the subscribe frame: subscribed.
            ready = true;
            if (stalled) socket.pause();
            resolve(reader);
            continue;
          }
          reader.lines++;
          // Only small lines are parsed: a 256 KB raider.done is counted, not read.
          if (line.length < 2048) {
            const event = JSON.parse(line.toString('utf8')) as Json;
            if (event.type === 'raider.queued') {
              const id = String(event.mission_id);
              reader.arrivals.set(id, at);
              reader.onArrival?.(id);
            }
          }
        }
        if (chunk.length > 0) reader.parts.push(Buffer.from(chunk));
      });
      socket.on('error', reject);
      socket.on('close', () => (reader.closed = true));
      socket.on('connect', () => {
        socket.write(
          `${JSON.stringify({ type: 'subscribe', payload: { filter } })}\n${JSON.stringify({ type: 'command', payload: { cmd: 'status' } })}\n`,
        );
      });
    });
  }

  /** Resolves when the raider.queued of `missionId` has arrived. */
  arrived(missionId: string): Promise<number> {
    const at = this.arrivals.get(missionId);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve) => {
      const previous = this.onArrival;
      this.onArrival = (id) => {
        previous?.(id);
        if (id === missionId) {
          this.onArrival = previous;
          resolve(this.arrivals.get(id)!);
        }
      };
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

/** `n` missions to `slot` from 10 connections, pipelined; resolves with their mission ids and the time the frames went out. */
async function burst(hall: HallProcess, slot: string, n: number): Promise<{ ids: string[]; t0: number; repliedMs: number }> {
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => Client.connect(hall.socket)));
  const t0 = nowMs();
  const replies = (
    await Promise.all(
      clients.map((c, w) => {
        const share = Math.floor(n / CONNECTIONS) + (w < n % CONNECTIONS ? 1 : 0);
        return c.pipeline(Array.from({ length: share }, (): Json => ({ cmd: 'spawn', name: slot, mission: 'queued' })));
      }),
    )
  ).flat();
  const repliedMs = nowMs() - t0;
  for (const c of clients) c.close();
  for (const r of replies) if (r.queued !== 1) throw new Error(`a mission to ${slot} was not queued: ${JSON.stringify(r)}`);
  return { ids: replies.map((r) => String(r.mission_id)), t0, repliedMs };
}

/** Missions queued one at a time; each waits until every reader has the previous one. Latency per reader per event. */
async function steady(hall: HallProcess, slot: string, n: number, readers: Reader[], stop?: () => boolean): Promise<number[]> {
  const client = await Client.connect(hall.socket);
  const latencies: number[] = [];
  for (let i = 0; i < n && !stop?.(); i++) {
    const sent = nowMs();
    const reply = await client.command({ cmd: 'spawn', name: slot, mission: 'queued' });
    if (reply.queued !== 1) throw new Error(`not queued: ${JSON.stringify(reply)}`);
    const ats = await Promise.all(readers.map((r) => r.arrived(String(reply.mission_id))));
    for (const at of ats) latencies.push(at - sent);
  }
  client.close();
  return latencies;
}

async function occupy(hall: HallProcess, slot: string): Promise<void> {
  const r = await request(hall.socket, { cmd: 'spawn', name: slot, mission: 'wait 600' });
  if (typeof r.pid !== 'number') throw new Error(`${slot} did not start: ${JSON.stringify(r)}`);
}

runMain(async () => {
  const missions = argNumber('--missions') ?? count(5000, 1000);
  const probes = count(300, 100);
  console.log(`# fan-out: ${SUBSCRIBERS} subscribers, bursts of ${missions} events, ${machine()}`);
  const root = tempRoot('fanout');
  const raider = writeFanoutRaider(tempRoot('fanout-bin'));
  const { hall } = await startHall(root, raider);
  const pid = hall.child.pid!;
  for (const slot of ['1floor', '1burst', '1steady', '1stalled']) await occupy(hall, slot);

  // 1. Floor: nobody listens.
  let cpu0 = processCpuMs(pid);
  const floor = await burst(hall, '1floor', missions);
  const floorCpu = processCpuMs(pid) - cpu0;

  // 2. Throughput with 100 readers.
  const readers = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => Reader.open(hall.socket, 'raider.')));
  cpu0 = processCpuMs(pid);
  const wide = await burst(hall, '1burst', missions);
  const lastId = wide.ids[wide.ids.length - 1]!;
  const lastAt = await Promise.all(readers.map((r) => r.arrived(lastId)));
  const deliveryMs = Math.max(...lastAt) - wide.t0;
  const wideCpu = processCpuMs(pid) - cpu0;
  const spread = wide.ids.map((id) => {
    const ats = readers.map((r) => r.arrivals.get(id)!);
    return Math.max(...ats) - Math.min(...ats);
  });
  const missing = readers.filter((r) => wide.ids.some((id) => !r.arrivals.has(id))).length;
  if (missing > 0) throw new Error(`${missing} readers missed events of the burst`);
  const perSecond = (missions * SUBSCRIBERS) / (deliveryMs / 1000);

  // 3. Latency, everyone reading.
  const baseline = stats(await steady(hall, '1steady', probes, readers));
  for (const r of readers) r.close();

  // 4. One subscriber never reads; fat events beside.
  const stalled = await Reader.open(hall.socket, 'raider.', true);
  const fatReaders = await Promise.all(Array.from({ length: 9 }, () => Reader.open(hall.socket, 'raider.')));
  const queuedReaders = await Promise.all(Array.from({ length: SUBSCRIBERS - 10 }, () => Reader.open(hall.socket, 'raider.queued')));
  const live = [...fatReaders, ...queuedReaders];
  const dropped = () => hall.stderr().includes(DROP_LINE);
  let fatRuns = 0;
  let fatDone = false;
  const fatSide = (async () => {
    const client = await Client.connect(hall.socket);
    const t0 = nowMs();
    while (!dropped() && fatRuns < 400 && nowMs() - t0 < 60_000) {
      const replies = await client.pipeline(Array.from({ length: 4 }, (): Json => ({ cmd: 'spawn', name: 'fat', mission: 'fat' })));
      for (const r of replies) if (typeof r.id !== 'string') throw new Error(`fat spawn failed: ${JSON.stringify(r)}`);
      fatRuns += 4;
      await sleep(20);
    }
    client.close();
    fatDone = true;
  })();
  const t4 = nowMs();
  const withStalled = await steady(hall, '1stalled', probes * 10, live, () => fatDone);
  await fatSide;
  // Once it is dropped, the readers still get everything.
  const after = stats(await steady(hall, '1stalled', probes, live));
  const stalledMs = nowMs() - t4;
  const dropLine =
    hall
      .stderr()
      .split('\n')
      .find((l) => l.includes(DROP_LINE)) ?? '(no drop logged)';
  await sleep(200);
  stalled.socket.resume();
  await sleep(500);
  const statusAfter = await request(hall.socket, { cmd: 'status' });
  for (const r of [...live, stalled]) r.close();
  const fatBytes = fatReaders.reduce((n, r) => n + r.bytes, 0) / fatReaders.length;
  const stopMs = await hall.stop(30_000);

  const withStats = stats(withStalled);
  console.log('');
  console.log(
    table(
      ['', 'ms', 'events/s delivered', 'hall CPU (ms)'],
      [
        [`burst of ${missions}, no subscriber: all replies`, fmt(floor.repliedMs, 0), '', fmt(floorCpu, 0)],
        [`burst of ${missions}, ${SUBSCRIBERS} subscribers: last event read`, fmt(deliveryMs, 0), fmt(perSecond, 0), fmt(wideCpu, 0)],
      ],
    ),
  );
  console.log(
    `fan-out cost: ${fmt(deliveryMs / floor.repliedMs)}x the time of the burst with nobody listening; hall CPU ${fmt(((wideCpu - floorCpu) / (missions * SUBSCRIBERS)) * 1000, 2)} µs per delivered event more`,
  );
  console.log('');
  console.log(
    table(STATS_HEADERS, [
      statsRow(`spread per event, first to last of ${SUBSCRIBERS} readers (ms)`, stats(spread)),
      statsRow(`send → read, one at a time, ${SUBSCRIBERS} readers (ms)`, baseline),
      statsRow(`the same, one subscriber stalled + ${FAT_KB} KB events (ms)`, withStats),
      statsRow('the same, after the stalled one was dropped (ms)', after),
    ]),
  );
  console.log('');
  console.log(
    `stalled subscriber: ${dropped() ? 'dropped' : 'NOT dropped'} after ${fatRuns} runs with ${FAT_KB} KB results (~${fmt(fatBytes / 1048576, 1)} MB read by each reader of raider.*), ${fmt(stalledMs / 1000, 1)} s`,
  );
  console.log(`hall log: ${dropLine}`);
  console.log(`status afterwards: ${statusAfter.running} running, answered; hall stopped in ${fmt(stopMs, 0)} ms`);
  const stallRatio = withStats.median / baseline.median;

  summary([
    {
      bench: 'fanout',
      metric: `${missions} events to ${SUBSCRIBERS} subscribers: events/s delivered; time vs no subscriber`,
      value: `${fmt(perSecond, 0)}/s; ${fmt(deliveryMs, 0)} ms = ${fmt(deliveryMs / floor.repliedMs)}x`,
    },
    {
      bench: 'fanout',
      metric: 'spread first→last subscriber per event median / p90 (ms)',
      value: `${fmt(stats(spread).median)} / ${fmt(stats(spread).p90)}`,
    },
    {
      bench: 'fanout',
      metric: 'send→read median / p90 (ms): all reading → one stalled',
      value: `${fmt(baseline.median)} / ${fmt(baseline.p90)} → ${fmt(withStats.median)} / ${fmt(withStats.p90)} (${fmt(stallRatio)}x)`,
      target: 'readers not stalled',
      met: withStats.p90 < Math.max(50, baseline.p90 * 5),
    },
    {
      bench: 'fanout',
      metric: 'a subscriber that never reads is dropped, with a logged reason',
      value: dropped() ? `after ${fatRuns} fat runs` : 'not dropped',
      target: 'dropped',
      met: dropped(),
    },
  ]);
});
