/**
 * ACP event-to-update latency: 20 sessions at once, each on a connection of
 * its own (the SDK client over the hall's ACP socket), each running a raider
 * that writes `message` events carrying their own write time (epoch ms,
 * sub-millisecond). The client notes when each `agent_message_chunk` arrives:
 * the difference is the time from the raider writing the event to the client
 * holding its update (inotify wake-up, reading the events file, mapping,
 * JSON-RPC over the socket). The raiders start together but write their
 * first event only at a set moment, once all of them run, so process start-up
 * is not measured. Target: median under 5 ms.
 *
 *   node --import tsx bench/acp-latency.ts [--quick] [--sessions N] [--events N]
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { client, methods, ndJsonStream, type ClientConnection } from '@agentclientprotocol/sdk';
import {
  argNumber,
  count,
  epochMs,
  fmt,
  machine,
  nowMs,
  processCpuMs,
  runMain,
  startHall,
  stats,
  STATS_HEADERS,
  statsRow,
  summary,
  table,
  tempRoot,
} from './lib.js';

const TARGET_MEDIAN_MS = 5;
const INTERVAL_MS = 20;

/**
 * The raider: mission `stamp N INTERVAL START` writes N `message` events
 * `t=EPOCH_MS`, INTERVAL ms apart, the first at START (epoch ms), then its result.
 */
function writeStampRaider(dir: string): string {
  const file = path.join(dir, 'stamp-raider.mjs');
  fs.writeFileSync(
    file,
    `#!${process.execPath}
import fs from 'node:fs';
const argv = process.argv.slice(2);
const [verb, n, interval, start] = argv[argv.indexOf('--') + 1].split(' ');
let seq = 0;
const write = (event) => fs.writeSync(1, JSON.stringify({ ...event, seq: ++seq, time: Date.now() / 1000, version: 1 }) + '\\n');
const now = () => performance.timeOrigin + performance.now();
write({ type: 'run.started', engine: 'stamp' });
if (verb !== 'stamp') {
  write({ type: 'run.finished', status: 'completed', response: 'ok', elapsed: 0 });
  process.exit(0);
}
let i = 0;
const tick = () => {
  write({ type: 'message', role: 'assistant', content: 't=' + now().toFixed(3) + ';' });
  if (++i < Number(n)) return setTimeout(tick, Number(start) + i * Number(interval) - now());
  write({ type: 'run.finished', status: 'completed', response: 'done', elapsed: 0 });
  process.exit(0);
};
setTimeout(tick, Math.max(0, Number(start) - now()));
`,
    { mode: 0o755 },
  );
  return file;
}

interface Session {
  conn: ClientConnection;
  socket: net.Socket;
  sessionId: string;
  latencies: number[];
}

async function openSession(socketPath: string, cwd: string): Promise<Session> {
  const socket = net.connect(socketPath);
  await new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject));
  const latencies: number[] = [];
  const app = client({ name: 'bench' }).onNotification(methods.client.session.update, ({ params }) => {
    const at = epochMs();
    const update = (params as { update: { sessionUpdate: string; content?: { text?: string } } }).update;
    if (update.sessionUpdate !== 'agent_message_chunk') return;
    for (const m of (update.content?.text ?? '').matchAll(/t=(\d+\.\d+);/g)) latencies.push(at - Number(m[1]));
  });
  const conn = app.connect(
    ndJsonStream(Writable.toWeb(socket) as WritableStream<Uint8Array>, Readable.toWeb(socket) as ReadableStream<Uint8Array>),
  );
  await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const created = (await conn.agent.request('session/new', { cwd, mcpServers: [], raiderName: 'stamp' })) as { sessionId: string };
  return { conn, socket, sessionId: created.sessionId, latencies };
}

async function round(sessions: Session[], events: number): Promise<void> {
  // Time enough for every raider to start before the first event.
  const start = epochMs() + 1500 + sessions.length * 40;
  const answers = await Promise.all(
    sessions.map((s) =>
      s.conn.agent.request(methods.agent.session.prompt, {
        sessionId: s.sessionId,
        prompt: [{ type: 'text', text: `stamp ${events} ${INTERVAL_MS} ${start.toFixed(0)}` }],
      }),
    ),
  );
  for (const a of answers)
    if ((a as { stopReason: string }).stopReason !== 'end_turn') throw new Error(`a prompt ended ${JSON.stringify(a)}`);
}

runMain(async () => {
  const sessionCount = argNumber('--sessions') ?? 20;
  const events = argNumber('--events') ?? count(100, 30);
  const rounds = count(2, 1);
  console.log(
    `# ACP latency: ${sessionCount} sessions at once, ${events} events each ${INTERVAL_MS} ms apart, ${rounds} round(s), ${machine()}`,
  );
  const root = tempRoot('acp-latency');
  fs.writeFileSync(path.join(root, '.raider-hall.yml'), 'raiders:\n  stamp: {}\n');
  const raider = writeStampRaider(tempRoot('acp-latency-bin'));
  const { hall } = await startHall(root, raider);
  const acpSocket = path.join(root, '.raider-hall.acp.socket');

  // Warm-up: one session, one short round.
  const warm = await openSession(acpSocket, root);
  await round([warm], 5);
  warm.socket.destroy();

  const sessions = await Promise.all(Array.from({ length: sessionCount }, () => openSession(acpSocket, root)));
  const cpu0 = processCpuMs(hall.child.pid!);
  const t0 = nowMs();
  for (let r = 0; r < rounds; r++) await round(sessions, events);
  const wallMs = nowMs() - t0;
  const hallCpu = processCpuMs(hall.child.pid!) - cpu0;
  for (const s of sessions) s.socket.destroy();
  await hall.stop();

  const all = sessions.flatMap((s) => s.latencies);
  const expected = sessionCount * events * rounds;
  const st = stats(all);
  const perSession = stats(sessions.map((s) => stats(s.latencies).median));
  console.log('');
  console.log(
    table(STATS_HEADERS, [
      statsRow(`raider write → client update, all ${sessionCount} sessions (ms)`, st),
      statsRow('median of each session (ms)', perSession),
    ]),
  );
  console.log('');
  console.log(
    `updates received: ${all.length} of ${expected}; ${sessionCount} sessions × ${events} events × ${rounds} round(s) in ${fmt(wallMs / 1000, 1)} s`,
  );
  console.log(`hall CPU per update: ${fmt(hallCpu / Math.max(1, all.length), 2)} ms (with the runs' own start and end)`);
  console.log(`median ${fmt(st.median)} ms  target < ${TARGET_MEDIAN_MS} ms: ${st.median < TARGET_MEDIAN_MS ? 'met' : 'MISSED'}`);
  if (all.length !== expected) throw new Error(`${expected - all.length} updates never arrived`);

  summary([
    {
      bench: 'acp-latency',
      metric: `event → update, ${sessionCount} sessions: median / p90 / max (ms), n=${all.length}`,
      value: `${fmt(st.median)} / ${fmt(st.p90)} / ${fmt(st.max)}`,
      target: `median < ${TARGET_MEDIAN_MS} ms`,
      met: st.median < TARGET_MEDIAN_MS,
    },
  ]);
});
