/**
 * The cluster's chaos run: three real halls (`bin/raider hall start`) on one
 * embedded PostgreSQL, `cluster_mode: shared`; missions over a plain slot,
 * three numbered slots and five bindings, submitted one after the other to
 * whichever hall is up; every few seconds a random hall is killed with
 * `kill -9` and started again a moment later (sometimes before its lease runs
 * out, sometimes after); once, the database is stopped and started again.
 *
 * The raider is test/fixtures/chaos-raider.sh: it appends its start and end,
 * with the clock, its hall's root and its session, to a record file, the
 * ground truth the checks read. The database gives the rest: the
 * `raider.done` rows of `raider_hall_events` (each lost run's report is
 * written there in the takeover's own transaction), and empty mission and
 * run tables at the end.
 *
 * Used by test/postgres/cluster-chaos.test.ts (a small run in `npm test`)
 * and scripts/chaos-cluster.ts (`npm run chaos:cluster`, 1,000 missions).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { PostgresServer } from './postgres-server.js';
import { REPO, spawnHallProcess, type Json } from './hall-client.js';
import { tempRoot } from './temp-roots.js';

export const CHAOS_RAIDER = path.join(REPO, 'test', 'fixtures', 'chaos-raider.sh');
const CLUSTER = 'chaos';
const NUMBERED = ['1bjorn', '2bjorn', '3bjorn'];
const BINDINGS = [1, 2, 3, 4, 5].map((n) => `telegram:chaos:${n}`);
const REQUEST_TIMEOUT_MS = 5_000;

export interface ChaosOptions {
  server: PostgresServer;
  missions: number;
  /** Missions submitted per second (one after the other, each waiting for its reply). */
  submitPerSecond: number;
  /** A random hall is killed this often while missions are submitted and drained. */
  killEveryMs: number;
  /** A killed hall starts again after a random delay in this range. */
  restartAfterMs: readonly [number, number];
  /** How long the database stays stopped in its one restart. */
  databaseDownMs: number;
  leaseSeconds: number;
  maxRunning: number;
  /** The longest a raider sleeps (each sleeps a random 0 to this). */
  raiderMaxMs: number;
  /** Gives up waiting for the missions to settle after this long. */
  settleTimeoutMs: number;
  log?: (line: string) => void;
}

export interface ChaosReport {
  ms: number;
  accepted: number;
  refused: number;
  /** Submissions whose reply never came (the hall died): they may run, at most once. */
  unanswered: number;
  started: number;
  reportedLost: number;
  kills: number;
  takenOver: number;
  databaseRestarts: number;
  /** Halls that exited without being killed (the database's restart, say). */
  selfExits: string[];
  runsPerHall: Record<string, number>;
  /** raider.done rows in the database (a killed hall's last batch of events may never be written). */
  doneRows: number;
  /** Every property that did not hold; empty when the run was right. */
  violations: string[];
  /** Numbered slots and bindings whose runs did not all continue one session. */
  sessionBreaks: string[];
}

interface Submission {
  label: string;
  index: number;
  queue: string | null;
  missionId: string | null;
  outcome: 'accepted' | 'refused' | 'unanswered';
}

interface Start {
  label: string;
  root: string;
  session: string;
  start: bigint;
  end: bigint | null;
}

/** One command, one reply; null when the hall died before answering (or did not answer in time). */
function ask(socket: string, payload: Json): Promise<Json | null> {
  return new Promise((resolve) => {
    const conn = net.connect(socket);
    let buffer = '';
    let done = false;
    const finish = (reply: Json | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      conn.destroy();
      resolve(reply);
    };
    const timer = setTimeout(() => finish(null), REQUEST_TIMEOUT_MS);
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl >= 0) finish(JSON.parse(buffer.slice(0, nl)) as Json);
    });
    conn.on('error', () => finish(null));
    conn.on('close', () => finish(null));
    conn.write(`${JSON.stringify({ type: 'command', payload })}\n`);
  });
}

class ChaosHall {
  child: ChildProcess | null = null;
  up = false;
  starting: Promise<void> | null = null;
  constructor(
    readonly id: string,
    readonly root: string,
  ) {}
  get socket(): string {
    return path.join(this.root, '.raider-hall.socket');
  }
}

function readRecord(file: string): Map<string, Start[]> {
  const byLabel = new Map<string, Start[]>();
  const open = new Map<string, Start>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [kind, label = '', a = '', b = '', c = ''] = line.split(' ');
    if (kind === 'start') {
      const start: Start = { label, root: a, session: b, start: BigInt(c), end: null };
      byLabel.set(label, [...(byLabel.get(label) ?? []), start]);
      open.set(label, start);
    } else if (kind === 'end') {
      const start = open.get(label);
      if (start) start.end = BigInt(a);
    }
  }
  return byLabel;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const t0 = Date.now();
  const url = await options.server.freshDatabase();
  // CHAOS_KEEP=1 keeps the halls' roots (their logs) for a look after a failed run.
  const work = process.env.CHAOS_KEEP ? fs.mkdtempSync(path.join(os.tmpdir(), 'chaos-kept-')) : tempRoot('chaos-');
  log(`halls' roots in ${work}`);
  const record = path.join(work, 'record.txt');
  fs.writeFileSync(record, '');
  const halls = ['chaos-1', 'chaos-2', 'chaos-3'].map((id) => {
    const root = path.join(work, id);
    fs.mkdirSync(root);
    fs.writeFileSync(
      path.join(root, '.raider-hall.yml'),
      `raiders: { bjorn: {}, ulf: {} }\nstorage: { postgres: "${url}" }\ncluster: ${CLUSTER}\ncluster_mode: shared\n` +
        `hall_id: ${id}\nlease_seconds: ${options.leaseSeconds}\nmax_running: ${options.maxRunning}\n`,
    );
    return new ChaosHall(id, root);
  });
  const env = { RAIDER_HALL_RAIDER_BIN: CHAOS_RAIDER, FAKE_RAIDER_RECORD: record };
  let finished = false;
  let databaseDown = false;
  let kills = 0;
  const selfExits: string[] = [];
  let databaseRestarts = 0;
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };

  /** Starts the hall unless it is up or starting (a scheduled restart and the final one may meet). */
  const ensureUp = (hall: ChaosHall): Promise<void> => {
    if (hall.up) return Promise.resolve();
    hall.starting ??= startHall(hall).finally(() => {
      hall.starting = null;
    });
    return hall.starting;
  };
  const startHall = async (hall: ChaosHall): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        // A loaded machine (three halls, their raiders and PostgreSQL on two cores) starts a hall slowly.
        const child = await spawnHallProcess(hall.root, env, 45_000);
        // What the hall says (its warnings: takeovers, refused runs), kept with its root for CHAOS_KEEP.
        child.stderr?.on('data', (chunk: Buffer) => fs.appendFileSync(path.join(hall.root, 'hall-stderr.log'), chunk));
        hall.child = child;
        hall.up = true;
        child.once('exit', (code, signal) => {
          // Not our kill -9: the hall stopped by itself.
          if (hall.child !== child || !hall.up || finished) return;
          hall.up = false;
          selfExits.push(`${hall.id} exited by itself (${signal ?? `code ${code}`})`);
          log(`${hall.id} exited by itself (${signal ?? `code ${code}`}); starting it again`);
          later(200, () => {
            if (!finished) void ensureUp(hall);
          });
        });
        return;
      } catch (err) {
        // The database may be down, or the machine slow: try again.
        log(`${hall.id} did not start (attempt ${attempt}): ${String(err).split('\n')[0]}`);
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const kill = (hall: ChaosHall): void => {
    if (!hall.up || !hall.child) return;
    hall.up = false;
    hall.child.kill('SIGKILL');
    kills++;
    const after = options.restartAfterMs[0] + Math.random() * (options.restartAfterMs[1] - options.restartAfterMs[0]);
    log(`kill -9 ${hall.id}; back in ${(after / 1000).toFixed(1)} s`);
    later(after, () => {
      if (!finished) void ensureUp(hall);
    });
  };

  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined);
  const count = async (table: string): Promise<number> => {
    const r = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE cluster = $1`, [CLUSTER]);
    return Number(r.rows[0]?.n ?? 0);
  };

  const submissions: Submission[] = [];
  try {
    await Promise.all(halls.map((h) => ensureUp(h)));
    log(`three halls up in ${Date.now() - t0} ms`);
    let killing = true;
    const killer = (): void => {
      if (!killing) return;
      const live = halls.filter((h) => h.up);
      // Keep one hall up: submissions need one, and the others' takeover is what is tested.
      if (live.length > 1 && !databaseDown) kill(live[Math.floor(Math.random() * live.length)] ?? live[0]!);
      later(options.killEveryMs, killer);
    };
    later(options.killEveryMs, killer);

    const restartDatabaseAt = Math.floor(options.missions / 2);
    const interval = 1000 / options.submitPerSecond;
    const tSubmit = Date.now();
    for (let i = 0; i < options.missions; i++) {
      if (i === restartDatabaseAt) {
        databaseDown = true;
        log('stopping the database');
        await options.server.stop();
        await new Promise((r) => setTimeout(r, options.databaseDownMs));
        await options.server.start();
        databaseRestarts++;
        databaseDown = false;
        log('the database is back');
      }
      const due = tSubmit + i * interval;
      if (Date.now() < due) await new Promise((r) => setTimeout(r, due - Date.now()));
      const k = i % 10;
      const seconds = ((Math.random() * options.raiderMaxMs) / 1000).toFixed(3);
      let payload: Json;
      let queue: string | null;
      if (k < 3) {
        queue = null;
        payload = { cmd: 'spawn', name: 'bjorn' };
      } else if (k < 6) {
        queue = NUMBERED[i % NUMBERED.length] ?? '1bjorn';
        payload = { cmd: 'spawn', name: queue };
      } else {
        queue = BINDINGS[i % BINDINGS.length] ?? 'telegram:chaos:1';
        payload = { cmd: 'spawn', name: 'ulf', binding: queue };
      }
      // Until one hall accepts it: each try is a submission of its own (a refused one never runs).
      for (let attempt = 0; ; attempt++) {
        const live = halls.filter((h) => h.up);
        const hall = live[(i + attempt) % Math.max(1, live.length)];
        const label = `m${i}t${attempt}`;
        if (!hall) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        const asked = Date.now();
        const reply = await ask(hall.socket, { ...payload, mission: `chaos ${label} ${seconds}` });
        if (Date.now() - asked > 500) log(`${label} to ${hall.id}: ${Date.now() - asked} ms, ${JSON.stringify(reply)}`);
        const accepted = reply !== null && reply.queued === 1 && typeof reply.mission_id === 'string';
        submissions.push({
          label,
          index: submissions.length,
          queue,
          missionId: accepted ? String(reply?.mission_id) : null,
          outcome: accepted ? 'accepted' : reply === null ? 'unanswered' : 'refused',
        });
        if (accepted) break;
        if (attempt > 200) throw new Error(`mission ${i} was refused 200 times; last reply ${JSON.stringify(reply)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    log(`${options.missions} missions submitted in ${Date.now() - t0} ms`);

    // Chaos goes on while the queues drain, until few missions are left.
    const deadline = Date.now() + options.settleTimeoutMs;
    for (;;) {
      const left = await count('raider_hall_missions').catch(() => Number.POSITIVE_INFINITY);
      if (left < options.missions / 20 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    killing = false;
    // Every hall up again, then wait for the tables to empty.
    await Promise.all(halls.map((h) => ensureUp(h)));
    for (;;) {
      const [missions, runs] = await Promise.all([count('raider_hall_missions'), count('raider_hall_runs')]);
      if (missions === 0 && runs === 0) break;
      if (Date.now() > deadline)
        throw new Error(`not settled after ${options.settleTimeoutMs} ms: ${missions} missions wait, ${runs} runs`);
      await new Promise((r) => setTimeout(r, 200));
    }
    log(`settled in ${Date.now() - t0} ms`);

    return await judge(submissions, record, pool, halls, { t0, kills, databaseRestarts, selfExits });
  } finally {
    finished = true;
    for (const timer of timers) clearTimeout(timer);
    await Promise.all(
      halls.map(async (h) => {
        const child = h.child;
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }),
    );
    await pool.end();
  }
}

async function judge(
  submissions: Submission[],
  record: string,
  pool: pg.Pool,
  halls: ChaosHall[],
  figures: { t0: number; kills: number; databaseRestarts: number; selfExits: string[] },
): Promise<ChaosReport> {
  const violations: string[] = [];
  const sessionBreaks: string[] = [];
  const starts = readRecord(record);
  const dones = await pool.query<{ hall: string; event: Json }>(
    `SELECT hall, event FROM raider_hall_events WHERE cluster = $1 AND event->>'type' = 'raider.done' ORDER BY id`,
    [CLUSTER],
  );
  const donesOf = new Map<string, Json[]>();
  for (const row of dones.rows) {
    const id = String(row.event.mission_id);
    donesOf.set(id, [...(donesOf.get(id) ?? []), row.event]);
  }
  const isLost = (e: Json): boolean => typeof e.error === 'string' && e.error.includes('that ran it was lost');
  const takenOver = dones.rows.filter((r) => isLost(r.event)).length;

  let started = 0;
  let reportedLost = 0;
  const runsPerHall: Record<string, number> = {};
  for (const s of submissions) {
    const runs = starts.get(s.label) ?? [];
    if (runs.length > 1) violations.push(`${s.label} ran ${runs.length} times (${runs.map((r) => r.root).join(', ')})`);
    for (const run of runs) {
      const hall = halls.find((h) => h.root === run.root)?.id ?? run.root;
      runsPerHall[hall] = (runsPerHall[hall] ?? 0) + 1;
      if (run.end === null) violations.push(`${s.label} started on ${hall} and never ended`);
    }
    if (s.outcome === 'refused' && runs.length > 0) violations.push(`${s.label} was refused and ran all the same`);
    if (s.outcome !== 'accepted' || s.missionId === null) continue;
    const events = donesOf.get(s.missionId) ?? [];
    const lost = events.filter(isLost);
    if (runs.length > 0) started++;
    if (lost.length > 0) reportedLost++;
    if (lost.length > 1) violations.push(`${s.label} (${s.missionId}) was reported lost ${lost.length} times`);
    if (runs.length === 0 && events.length === 0)
      violations.push(`${s.label} (${s.missionId}) was accepted and neither ran nor was reported`);
    if (events.length > 1)
      violations.push(
        `${s.label} (${s.missionId}) has ${events.length} raider.done: ${events.map((e) => `${e.status} ${e.id} on ${e.hall}${e.error ? ` (${e.error})` : ''}`).join('; ')}`,
      );
  }

  // Per numbered slot and per binding: no overlap in time, FIFO order, one session.
  const queues = new Map<string, Array<{ s: Submission; run: Start }>>();
  for (const s of submissions) {
    const run = starts.get(s.label)?.[0];
    if (s.queue === null || !run) continue;
    queues.set(s.queue, [...(queues.get(s.queue) ?? []), { s, run }]);
  }
  for (const [queue, list] of queues) {
    const byStart = [...list].sort((a, b) => (a.run.start < b.run.start ? -1 : a.run.start > b.run.start ? 1 : 0));
    for (let i = 1; i < byStart.length; i++) {
      const before = byStart[i - 1];
      const after = byStart[i];
      if (!before || !after) continue;
      if (before.run.end === null || before.run.end > after.run.start)
        violations.push(`${queue}: ${after.s.label} started while ${before.s.label} still ran`);
      if (before.s.index > after.s.index) violations.push(`${queue}: ${after.s.label} (submitted earlier) started after ${before.s.label}`);
    }
    const sessions = new Set(list.map((x) => x.run.session));
    if (sessions.size !== 1) sessionBreaks.push(`${queue}: its runs had ${sessions.size} sessions (${[...sessions].join(', ')})`);
  }

  return {
    ms: Date.now() - figures.t0,
    accepted: submissions.filter((s) => s.outcome === 'accepted').length,
    refused: submissions.filter((s) => s.outcome === 'refused').length,
    unanswered: submissions.filter((s) => s.outcome === 'unanswered').length,
    started,
    reportedLost,
    kills: figures.kills,
    takenOver,
    databaseRestarts: figures.databaseRestarts,
    selfExits: figures.selfExits,
    runsPerHall,
    doneRows: dones.rows.length,
    violations,
    sessionBreaks,
  };
}
