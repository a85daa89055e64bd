/**
 * ACP agents as raiders, against the same agent with no hall (docs/agents.md).
 * The agent is test/fixtures/scripted-acp-agent.mjs, the same program on both
 * sides; the floor drives it with the ACP SDK's client from this process.
 *
 * 1. Latency, interleaved round by round. Floor: start the agent, initialize,
 *    session/new, session/prompt `answer hello`; the first update
 *    (agent_message_chunk) and the end (the prompt's answer, then the agent
 *    stopped as the bridge stops it: stdin closed, SIGTERM, its exit). Hall:
 *    a `spawn` of the same mission to an `acp:` entry on an open connection;
 *    the first update is the first `message.chunk` line in the run's events
 *    file (what `attach` reads), the end is `raider.done` on the bus.
 *    Target: the hall adds at most 15 ms median per run. Beside them, in the
 *    same rounds, the same mission to an entry with `acp.keep_warm: 1`
 *    (docs/agents.md, "Warm bridges"): before each run the bench waits
 *    (untimed) until status shows a ready warm bridge, so that no run has
 *    one loading beside it, then pauses 250 ms (an agent started right
 *    after another run's end started slower), and each round turns the
 *    order of the three; it counts the warm runs whose pid was that
 *    bridge's (handed over, not started cold). Beside the end-to-end
 *    figures, each run less its agent's own time (SCRIPTED_ACP_TIMES: its
 *    process's start to its first chunk, and to its answer), which varies by
 *    tens of ms from run to run and drowns the hall's few; and that own time
 *    on each side, which the hall could lengthen.
 * 2. Memory with N runs in flight (mission `hang`: the agent waits for a
 *    cancel). What the hall adds per run: the bridges' PSS plus the growth of
 *    the hall's own PSS, over N; the agents' PSS beside it, and N agents
 *    driven directly for comparison (smaps_rollup). Target: at most 20 MiB.
 *    And what an idle warm bridge costs, waiting for its run.
 * 3. 50 runs spawned at once (pipelined on one connection): all 50 end
 *    `completed` with their own answer; the same 50 driven directly beside it.
 * 4. The bridge's start: `node -e 0` against `raider acp-client --help`.
 *
 *   node --import tsx bench/acp-agents.ts [--quick] [--rounds N] [--running N] [--parallel N] [--latency-only]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { client, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import { z } from 'zod';
import { parseJsonLine } from '../src/protocol/json-line.js';
import {
  argNumber,
  Client,
  count,
  epochMs,
  fmt,
  machine,
  type Memory,
  memoryOf,
  nowMs,
  processesUnder,
  RAIDER_BIN,
  REPO,
  runMain,
  sleep,
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

const AGENT = path.join(REPO, 'test', 'fixtures', 'scripted-acp-agent.mjs');
/** Where each agent's `answer` says when its process began, sent its first chunk and its answer (epoch ms). */
const AGENT_TIMES = path.join(tempRoot('acp-agent-times'), 'times.jsonl');

const agentTimesSchema = z.object({ origin: z.number(), first: z.number(), answer: z.number() });

/** The last agent's times: the runs go one at a time. */
function lastAgentTimes(): z.infer<typeof agentTimesSchema> {
  const lines = fs.readFileSync(AGENT_TIMES, 'utf8').trim().split('\n');
  const times = parseJsonLine(lines.at(-1) ?? '', agentTimesSchema);
  if (times === null) throw new Error(`no agent times in ${AGENT_TIMES}`);
  return times;
}
const TARGET_ADDED_MS = 15;
const TARGET_ADDED_PSS_MIB = 20;
const MISSION = 'answer hello';
/** The untimed pause before each measured run, the same for each. */
const SETTLE_MS = 250;

interface Timing {
  firstUpdate: number;
  done: number;
  /**
   * The same, less the agent's own time (its SCRIPTED_ACP_TIMES line: from its
   * process's start to its first chunk, and to its answer): what came before
   * the agent's process (the start of the hall's part, the bridge, the fork)
   * and after its chunk or answer (the relay, the stop, the exits, the reap).
   * The agent's start varies by tens of ms from run to run on a noisy
   * machine; this does not have it.
   */
  outsideFirst: number;
  outsideEnd: number;
  /** Hall runs: when the bridge wrote run.started (it has loaded and is about to start the agent). */
  bridgeUp?: number;
}

/** A scripted agent driven by the SDK's client, as the bridge drives it, with no hall. */
class DirectRun {
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;
  private first: (() => void) | undefined;
  readonly firstUpdate: Promise<void>;
  readonly pid: number;

  constructor(cwd: string) {
    this.child = spawn(AGENT, [], { cwd, env: { ...process.env, SCRIPTED_ACP_TIMES: AGENT_TIMES }, stdio: ['pipe', 'pipe', 'ignore'] });
    this.pid = this.child.pid ?? -1;
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.firstUpdate = new Promise((resolve) => (this.first = resolve));
  }

  /** Initialize, session/new, and the prompt; resolves with its stop reason. */
  async prompt(cwd: string, mission: string): Promise<string> {
    const { stdin, stdout } = this.child;
    if (stdin === null || stdout === null) throw new Error('the agent has no pipes');
    const app = client({ name: 'bench-floor' }).onNotification(methods.client.session.update, () => this.first?.());
    const conn = app.connect(
      ndJsonStream(Writable.toWeb(stdin) as WritableStream<Uint8Array>, Readable.toWeb(stdout) as ReadableStream<Uint8Array>),
    );
    await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const session = await conn.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
    const result = await conn.agent.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: 'text', text: mission }],
    });
    return result.stopReason;
  }

  /** Stops the agent as the bridge does at a run's end: stdin closed, SIGTERM; resolves at its exit. */
  async stop(): Promise<void> {
    this.child.stdin?.end();
    this.child.kill('SIGTERM');
    await this.exited;
  }
}

async function floorRun(cwd: string): Promise<Timing> {
  const t0 = nowMs();
  const run = new DirectRun(cwd);
  let firstAt = 0;
  void run.firstUpdate.then(() => (firstAt = nowMs()));
  const reason = await run.prompt(cwd, MISSION);
  await run.stop();
  if (reason !== 'end_turn') throw new Error(`the direct run ended ${reason}`);
  return withOutside({ firstUpdate: firstAt - t0, done: nowMs() - t0 });
}

function eventsFile(root: string, id: string): string {
  return path.join(root, '.raider-hall', 'logs', `${id}.events.jsonl`);
}

/**
 * Resolves when the run's events file holds `needle`. Watched (inotify on the
 * logs directory), not polled: a poll every millisecond took CPU from the
 * agent starting on the same two cores, on the hall's side of the bench only.
 */
async function eventsHold(root: string, id: string, needle: string, timeoutMs = 60_000): Promise<void> {
  const file = eventsFile(root, id);
  const name = path.basename(file);
  let size = -1;
  const holds = (): boolean => {
    try {
      const now = fs.statSync(file).size;
      if (now === size) return false;
      size = now;
      return fs.readFileSync(file, 'utf8').includes(needle);
    } catch {
      return false; // not written yet
    }
  };
  await new Promise<void>((resolve, reject) => {
    const watcher = fs.watch(path.dirname(file), (_kind, changed) => {
      if (changed === name && holds()) finish();
    });
    const timer = setTimeout(() => {
      watcher.close();
      reject(new Error(`run ${id}: no ${needle} in its events within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      watcher.close();
      resolve();
    };
    // Written before the watch began.
    if (holds()) finish();
  });
}

/** The `time` (epoch seconds) of the run's first event of `type`, in epoch ms. */
function eventTimeMs(root: string, id: string, type: string): number {
  for (const line of fs.readFileSync(eventsFile(root, id), 'utf8').split('\n')) {
    if (!line.includes(`"${type}"`)) continue;
    const event: unknown = JSON.parse(line);
    if (typeof event === 'object' && event !== null && 'time' in event && typeof event.time === 'number') return event.time * 1000;
  }
  return Number.NaN;
}

async function hallRun(root: string, conn: Client, sub: Subscription, name = 'scripted'): Promise<Timing & { pid: number }> {
  const t0 = nowMs();
  const e0 = epochMs();
  const reply = await conn.command({ cmd: 'spawn', name, mission: MISSION });
  const id = String(reply.id);
  const done = sub.done(id);
  await eventsHold(root, id, '"message.chunk"');
  const firstAt = nowMs();
  const { event, at } = await done;
  if (event.status !== 'completed') throw new Error(`hall run ${id} ended ${JSON.stringify(event)}`);
  const timing = withOutside({ firstUpdate: firstAt - t0, done: at - t0 });
  return { ...timing, bridgeUp: eventTimeMs(root, id, 'run.started') - e0, pid: Number(reply.pid) };
}

/** The run's timing with the agent's own time (its last SCRIPTED_ACP_TIMES line) taken out. */
function withOutside(t: { firstUpdate: number; done: number }): Timing {
  const agent = lastAgentTimes();
  return { ...t, outsideFirst: t.firstUpdate - (agent.first - agent.origin), outsideEnd: t.done - (agent.answer - agent.origin) };
}

/** The pid of a ready warm bridge of the `warm` entry, once status shows one. */
async function readySpare(conn: Client, timeoutMs = 30_000): Promise<number> {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    const status = await conn.command({ cmd: 'status' });
    const spares = (status.warm_bridges as Record<string, Array<{ pid: number | null; ready: boolean }>> | undefined)?.warm ?? [];
    const ready = spares.find((s) => s.ready && s.pid !== null);
    if (ready?.pid) return ready.pid;
    if (nowMs() > deadline) throw new Error('no warm bridge became ready');
    await sleep(5);
  }
}

function sumMemory(pids: readonly number[]): Memory {
  const total: Memory = { rss: 0, pss: 0, uss: 0 };
  for (const pid of pids) {
    const m = memoryOf(pid);
    total.rss += m.rss;
    total.pss += m.pss;
    total.uss += m.uss;
  }
  return total;
}

/** Our processes of the hall root whose command line holds `word`. */
function pidsWith(root: string, word: string): number[] {
  return processesUnder(root).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(word);
    } catch {
      return false;
    }
  });
}

function median(values: readonly number[]): number {
  return stats(values).median;
}

/** Wall time of `node ARGS` (stdout discarded), ms. */
function timeNode(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const child = spawn(process.execPath, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(nowMs() - t0) : reject(new Error(`node ${args.join(' ')} exited ${code}`))));
  });
}

runMain(async () => {
  const rounds = argNumber('--rounds') ?? count(40, 10);
  const running = argNumber('--running') ?? count(10, 5);
  const parallel = argNumber('--parallel') ?? 50;
  const root = tempRoot('acp-agents');
  const timesEnv = JSON.stringify({ SCRIPTED_ACP_TIMES: AGENT_TIMES });
  fs.writeFileSync(
    path.join(root, '.raider-hall.yml'),
    `raiders:\n  scripted: { acp: { command: ${JSON.stringify(AGENT)}, env: ${timesEnv} } }\n  warm: { acp: { command: ${JSON.stringify(AGENT)}, env: ${timesEnv}, keep_warm: 1 } }\n`,
  );
  const floorDir = tempRoot('acp-floor');
  const { hall } = await startHall(root, writeMinimalRaider(root));
  const sub = await Subscription.open(hall.socket, 'raider.done');
  const conn = await Client.connect(hall.socket);
  console.log(`# acp-agents: ${machine()}`);

  // 1. Latency, floor and hall in turn, after one warm-up each.
  await floorRun(floorDir);
  await hallRun(root, conn, sub);
  await readySpare(conn);
  await hallRun(root, conn, sub, 'warm');
  const floor: Timing[] = [];
  const viaHall: Timing[] = [];
  const viaWarm: Timing[] = [];
  let handed = 0;
  const kinds = ['floor', 'cold', 'warm'] as const;
  for (let i = 0; i < rounds; i++) {
    // Each of the three starts with a warm bridge ready and idle (none of them runs beside one that
    // loads) and after the same pause: an agent started right after another run's end started some
    // ms slower here (the exits' work in the kernel), so each waits alike, and the order turns.
    for (let k = 0; k < kinds.length; k++) {
      const kind = kinds[(i + k) % kinds.length];
      const spare = await readySpare(conn);
      await sleep(SETTLE_MS);
      if (kind === 'floor') floor.push(await floorRun(floorDir));
      else if (kind === 'cold') viaHall.push(await hallRun(root, conn, sub));
      else {
        const warm = await hallRun(root, conn, sub, 'warm');
        if (warm.pid === spare) handed++;
        viaWarm.push(warm);
      }
    }
  }
  type Measure = 'firstUpdate' | 'done' | 'outsideFirst' | 'outsideEnd';
  const pick = (ts: Timing[], k: Measure) => ts.map((t) => t[k]);
  const addedFirst = median(pick(viaHall, 'firstUpdate')) - median(pick(floor, 'firstUpdate'));
  const addedDone = median(pick(viaHall, 'done')) - median(pick(floor, 'done'));
  const warmFirst = median(pick(viaWarm, 'firstUpdate')) - median(pick(floor, 'firstUpdate'));
  const warmDone = median(pick(viaWarm, 'done')) - median(pick(floor, 'done'));
  const ratio = (ts: Timing[], k: 'firstUpdate' | 'done') => median(pick(ts, k)) / median(pick(floor, k));
  // Each round's run against the same round's floor: the load, which drifts over a run, cancels out.
  const paired = (ts: Timing[], k: Measure) => median(ts.map((t, i) => t[k] - (floor[i]?.[k] ?? Number.NaN)));
  const addedOutside = (ts: Timing[], k: Measure) => median(pick(ts, k)) - median(pick(floor, k));
  const warmOutsideFirst = addedOutside(viaWarm, 'outsideFirst');
  const warmOutsideEnd = addedOutside(viaWarm, 'outsideEnd');
  console.log(`\n## one mission, ${rounds} rounds interleaved (ms)\n`);
  console.log(
    table(STATS_HEADERS, [
      statsRow('floor: first update', stats(pick(floor, 'firstUpdate'))),
      statsRow('hall: bridge wrote run.started', stats(viaHall.map((t) => t.bridgeUp ?? Number.NaN))),
      statsRow('hall: first update', stats(pick(viaHall, 'firstUpdate'))),
      statsRow('floor: end (agent exited)', stats(pick(floor, 'done'))),
      statsRow('hall: raider.done', stats(pick(viaHall, 'done'))),
      statsRow('hall warm: bridge wrote run.started', stats(viaWarm.map((t) => t.bridgeUp ?? Number.NaN))),
      statsRow('hall warm: first update', stats(pick(viaWarm, 'firstUpdate'))),
      statsRow('hall warm: raider.done', stats(pick(viaWarm, 'done'))),
      statsRow("floor, less the agent's own time: first update", stats(pick(floor, 'outsideFirst'))),
      statsRow("floor, less the agent's own time: end", stats(pick(floor, 'outsideEnd'))),
      statsRow("hall warm, less the agent's own time: first update", stats(pick(viaWarm, 'outsideFirst'))),
      statsRow("hall warm, less the agent's own time: raider.done", stats(pick(viaWarm, 'outsideEnd'))),
    ]),
  );
  console.log(`\nadded by the hall, median: first update ${fmt(addedFirst)} ms, end ${fmt(addedDone)} ms`);
  console.log(
    `added by the hall with a warm bridge (${handed} / ${rounds} runs handed over), median: first update ${fmt(warmFirst)} ms, end ${fmt(warmDone)} ms`,
  );
  console.log(
    `hall / floor, median: cold ${fmt(ratio(viaHall, 'firstUpdate'), 2)} (first update), ${fmt(ratio(viaHall, 'done'), 2)} (end); ` +
      `warm ${fmt(ratio(viaWarm, 'firstUpdate'), 2)}, ${fmt(ratio(viaWarm, 'done'), 2)}`,
  );
  console.log(
    `added, median of each round's difference from its floor run: cold ${fmt(paired(viaHall, 'firstUpdate'))} / ${fmt(paired(viaHall, 'done'))} ms, ` +
      `warm ${fmt(paired(viaWarm, 'firstUpdate'))} / ${fmt(paired(viaWarm, 'done'))} ms (first update / end)`,
  );
  console.log(
    `added outside the agent's own time (each run less its agent's start-to-chunk and start-to-answer), median: ` +
      `cold ${fmt(addedOutside(viaHall, 'outsideFirst'))} / ${fmt(addedOutside(viaHall, 'outsideEnd'))} ms, ` +
      `warm ${fmt(warmOutsideFirst)} / ${fmt(warmOutsideEnd)} ms (first update / end); each round against its floor: ` +
      `warm ${fmt(paired(viaWarm, 'outsideFirst'))} / ${fmt(paired(viaWarm, 'outsideEnd'))} ms`,
  );
  // The other side of it: the agent's own time, which the hall could lengthen (its work beside the agent's start).
  const own = (ts: Timing[], k: 'first' | 'end') =>
    median(ts.map((t) => (k === 'first' ? t.firstUpdate - t.outsideFirst : t.done - t.outsideEnd)));
  console.log(
    `the agent's own time (process start to first chunk / to answer), median: floor ${fmt(own(floor, 'first'))} / ${fmt(own(floor, 'end'))} ms, ` +
      `hall warm ${fmt(own(viaWarm, 'first'))} / ${fmt(own(viaWarm, 'end'))} ms, cold ${fmt(own(viaHall, 'first'))} / ${fmt(own(viaHall, 'end'))} ms`,
  );

  if (process.argv.includes('--latency-only')) {
    sub.close();
    conn.close();
    await hall.stop();
    console.log(`\nload average at the end: ${machine().replace(/.*load average /, '')}`);
    return;
  }

  // 4. The bridge's start, where the latency goes.
  const bare: number[] = [];
  const bridgeHelp: number[] = [];
  for (let i = 0; i < count(10, 5); i++) {
    bare.push(await timeNode(['-e', '0']));
    bridgeHelp.push(await timeNode([RAIDER_BIN, 'acp-client', '--help']));
  }
  console.log("\n## the bridge's start (ms)\n");
  console.log(table(STATS_HEADERS, [statsRow('node -e 0', stats(bare)), statsRow('raider acp-client --help', stats(bridgeHelp))]));

  // 2. Memory with runs in flight.
  await sleep(1000);
  const hallIdle = memoryOf(hall.child.pid ?? -1);
  const ids: string[] = [];
  for (let i = 0; i < running; i++) ids.push(String((await conn.command({ cmd: 'spawn', name: 'scripted', mission: 'hang' })).id));
  for (const id of ids) await eventsHold(root, id, 'waiting');
  await sleep(1000);
  const hallBusy = memoryOf(hall.child.pid ?? -1);
  // The warm entry's idle bridge is not a run's: counted apart.
  const spares = pidsWith(root, 'acp-client\0--spare');
  const bridges = pidsWith(root, 'acp-client').filter((pid) => !spares.includes(pid));
  const spareMemory = sumMemory(spares);
  // A bridge's command line names the agent too (--agent-command).
  const agents = pidsWith(root, 'scripted-acp-agent').filter((pid) => !bridges.includes(pid));
  const bridgeMemory = sumMemory(bridges);
  const agentMemory = sumMemory(agents);
  const cancelled = ids.map((id) => sub.done(id));
  for (const id of ids) await conn.command({ cmd: 'cancel', id });
  const ends = await Promise.all(cancelled);
  if (ends.some((e) => e.event.status !== 'cancelled')) throw new Error('a hanging run did not end cancelled');

  const direct = Array.from({ length: running }, () => new DirectRun(floorDir));
  let sessions = 0;
  const allWaiting = new Promise<void>((resolve) =>
    direct.forEach((d) => void d.firstUpdate.then(() => ++sessions === running && resolve())),
  );
  // Each ends when its agent is stopped: the connection closes under the prompt.
  const prompts = direct.map((d) => d.prompt(floorDir, 'hang').catch(() => 'closed'));
  await allWaiting;
  await sleep(1000);
  const directMemory = sumMemory(direct.map((d) => d.pid));
  await Promise.all(direct.map((d) => d.stop()));
  await Promise.all(prompts);

  const hallGrowth = hallBusy.pss - hallIdle.pss;
  const addedPss = (bridgeMemory.pss + hallGrowth) / running;
  const addedUss = (bridgeMemory.uss + hallBusy.uss - hallIdle.uss) / running;
  console.log(`\n## memory with ${running} ACP runs in flight (MiB, smaps_rollup)\n`);
  console.log(
    table(
      ['', 'processes', 'RSS', 'PSS', 'USS'],
      [
        ['hall, idle', '1', fmt(hallIdle.rss, 1), fmt(hallIdle.pss, 1), fmt(hallIdle.uss, 1)],
        [`hall, ${running} running`, '1', fmt(hallBusy.rss, 1), fmt(hallBusy.pss, 1), fmt(hallBusy.uss, 1)],
        ['bridges', String(bridges.length), fmt(bridgeMemory.rss, 1), fmt(bridgeMemory.pss, 1), fmt(bridgeMemory.uss, 1)],
        ['idle warm bridges', String(spares.length), fmt(spareMemory.rss, 1), fmt(spareMemory.pss, 1), fmt(spareMemory.uss, 1)],
        ['agents under the hall', String(agents.length), fmt(agentMemory.rss, 1), fmt(agentMemory.pss, 1), fmt(agentMemory.uss, 1)],
        ['agents driven directly', String(running), fmt(directMemory.rss, 1), fmt(directMemory.pss, 1), fmt(directMemory.uss, 1)],
      ],
    ),
  );
  console.log(`\nadded by the hall per running run: PSS ${fmt(addedPss, 1)} MiB, USS ${fmt(addedUss, 1)} MiB`);

  // 3. Many at once.
  const p0 = nowMs();
  const replies = await conn.pipeline(
    Array.from({ length: parallel }, (_, i) => ({ cmd: 'spawn', name: 'scripted', mission: `answer run-${i}` })),
  );
  const results = await Promise.all(replies.map((r) => sub.done(String(r.id), 300_000)));
  const hallParallelMs = nowMs() - p0;
  const complete = results.filter((r, i) => r.event.status === 'completed' && r.event.response === `run-${i}`).length;
  const d0 = nowMs();
  const directEnds = await Promise.all(
    Array.from({ length: parallel }, async () => {
      const d = new DirectRun(floorDir);
      const reason = await d.prompt(floorDir, MISSION);
      await d.stop();
      return reason;
    }),
  );
  const directParallelMs = nowMs() - d0;
  console.log(`\n## ${parallel} runs at once\n`);
  console.log(
    table(
      ['', 'ended as asked', 'wall (ms)'],
      [
        ['hall', `${complete} / ${parallel}`, fmt(hallParallelMs, 0)],
        ['direct', `${directEnds.filter((r) => r === 'end_turn').length} / ${parallel}`, fmt(directParallelMs, 0)],
      ],
    ),
  );

  sub.close();
  conn.close();
  await hall.stop();
  console.log(`\nload average at the end: ${machine().replace(/.*load average /, '')}`);

  summary([
    {
      bench: 'acp-agents',
      metric: `mission → raider.done: floor / hall median (ms), n=${rounds}`,
      value: `${fmt(median(pick(floor, 'done')))} / ${fmt(median(pick(viaHall, 'done')))}`,
    },
    {
      bench: 'acp-agents',
      metric: 'added by the hall, median: first update / end (ms)',
      value: `${fmt(addedFirst)} / ${fmt(addedDone)}`,
      target: `<= ${TARGET_ADDED_MS} ms`,
      met: addedDone <= TARGET_ADDED_MS,
    },
    {
      bench: 'acp-agents',
      metric: `added by the hall with a warm bridge (acp.keep_warm), median: first update / end (ms); ${handed}/${rounds} handed`,
      value: `${fmt(warmFirst)} / ${fmt(warmDone)}`,
      target: `<= ${TARGET_ADDED_MS} ms`,
      met: warmDone <= TARGET_ADDED_MS && warmFirst <= TARGET_ADDED_MS,
    },
    {
      bench: 'acp-agents',
      metric: "added by the hall with a warm bridge outside the agent's own time, median: first update / end (ms)",
      value: `${fmt(warmOutsideFirst)} / ${fmt(warmOutsideEnd)}`,
      target: `<= ${TARGET_ADDED_MS} ms`,
      met: warmOutsideEnd <= TARGET_ADDED_MS && warmOutsideFirst <= TARGET_ADDED_MS,
    },
    {
      bench: 'acp-agents',
      metric: 'bridge start: node -e 0 / raider acp-client --help median (ms)',
      value: `${fmt(median(bare))} / ${fmt(median(bridgeHelp))}`,
    },
    {
      bench: 'acp-agents',
      metric: `PSS added per running ACP run, ${running} running (MiB)`,
      value: fmt(addedPss, 1),
      target: `<= ${TARGET_ADDED_PSS_MIB} MiB`,
      met: addedPss <= TARGET_ADDED_PSS_MIB,
    },
    {
      bench: 'acp-agents',
      metric: `${parallel} ACP runs at once: completed; wall hall / direct (ms)`,
      value: `${complete} / ${parallel}; ${fmt(hallParallelMs, 0)} / ${fmt(directParallelMs, 0)}`,
      target: 'all complete',
      met: complete === parallel,
    },
  ]);
});
