// What a run leaves on its hall's host, seen from the other halls of a shared
// cluster: real hall processes (bin/raider hall start) on separate roots
// against one embedded PostgreSQL. A binding's session journal follows the
// binding to whichever hall runs its next mission; `status`, `attach` and
// `logs` on one hall answer for a run on another.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { usePostgresServer } from '../support/postgres-server.js';
import {
  eventually,
  hallEnv,
  RAIDER_BIN,
  request,
  runCli,
  spawnHallProcess,
  tapEvents,
  tempRoot,
  type EventTap,
  type Json,
} from '../support/test-hall.js';

const server = usePostgresServer();

interface HallProcess {
  id: string;
  root: string;
  socket: string;
  child: ChildProcess;
}

// The tests run side by side, each on a database of its own; what they leave running stops when the file ends.
const halls: HallProcess[] = [];
const taps: EventTap[] = [];
afterAll(async () => {
  for (const tap of taps.splice(0)) tap.close();
  await Promise.all(halls.splice(0).map((h) => stopHall(h)));
});

async function stopHall(h: HallProcess): Promise<void> {
  if (h.child.exitCode !== null || h.child.signalCode !== null) return;
  const exited = new Promise((resolve) => h.child.once('exit', resolve));
  h.child.kill('SIGTERM');
  await exited;
}

async function startHallOn(url: string, id: string, root = tempRoot()): Promise<HallProcess> {
  fs.writeFileSync(
    path.join(root, '.raider-hall.yml'),
    `raiders: { bjorn: {}, ulf: {} }\nstorage: { postgres: "${url}" }\ncluster: team-a\ncluster_mode: shared\n` +
      `hall_id: ${id}\nlease_seconds: 2\nmax_running: 2\n`,
  );
  const child = await spawnHallProcess(root);
  const hall = { id, root, socket: path.join(root, '.raider-hall.socket'), child };
  halls.push(hall);
  return hall;
}

async function tap(h: HallProcess, filter = ''): Promise<EventTap> {
  const t = await tapEvents(h.socket, filter);
  taps.push(t);
  return t;
}

async function query(url: string, text: string, values: unknown[] = []): Promise<Json[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** `raider hall attach ROOT ID --json` as a process whose output the test can wait on as it comes. */
function attachCli(
  root: string,
  id: string,
): { printed(text: string): Promise<void>; exited: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [RAIDER_BIN, 'hall', 'attach', root, id, '--json'], {
    env: hallEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return {
    printed: (text) => eventually(() => expect(stdout).toContain(text), 15_000),
    exited,
  };
}

/** Submits a mission to `h` and waits, on `h`'s bus, for its raider.done. */
async function runOn(h: HallProcess, events: EventTap, payload: Json): Promise<Json> {
  const reply = await request(h.socket, { cmd: 'spawn', ...payload });
  expect(reply).toMatchObject({ queued: 1, mission_id: expect.any(String) });
  return events.waitFor((e) => e.type === 'raider.done' && e.mission_id === reply.mission_id, 15_000);
}

describe.concurrent('a shared cluster', () => {
  it("a binding continues its session on another hall: the journal there holds the first hall's turns", async () => {
    const url = await server.freshDatabase();
    const binding = 'telegram:ops:7';
    const rootA = tempRoot();
    let a = await startHallOn(url, 'hall-a', rootA);
    const aEvents = await tap(a);
    const first = await runOn(a, aEvents, { name: 'ulf', binding, mission: 'journal one' });
    expect(first).toMatchObject({ status: 'completed', hall: 'hall-a', binding });
    const session = first.session as string;
    expect(JSON.parse(first.response)).toEqual([`one@${rootA}`]);

    // Hall a leaves; the binding's next mission can only run on hall b.
    await stopHall(a);
    const b = await startHallOn(url, 'hall-b');
    const bEvents = await tap(b);
    const second = await runOn(b, bEvents, { name: 'ulf', binding, mission: 'journal two' });
    expect(second).toMatchObject({ status: 'completed', hall: 'hall-b', session });
    expect(JSON.parse(second.response)).toEqual([`one@${rootA}`, `two@${b.root}`]);

    // And back on hall a, whose copy of the journal lacks hall b's turn until the run starts.
    a = await startHallOn(url, 'hall-a', rootA);
    const aAgain = await tap(a);
    await stopHall(b);
    const third = await runOn(a, aAgain, { name: 'ulf', binding, mission: 'journal three' });
    expect(third).toMatchObject({ status: 'completed', hall: 'hall-a', session });
    expect(JSON.parse(third.response)).toEqual([`one@${rootA}`, `two@${b.root}`, `three@${rootA}`]);

    // One session all along: bound once (by the first run), as the sessions table says.
    const bound = [...aEvents.all, ...bEvents.all, ...aAgain.all].filter((e) => e.type === 'session.bound');
    expect(bound).toEqual([expect.objectContaining({ binding, session, hall: 'hall-a' })]);
    expect(await query(url, 'SELECT binding, session FROM raider_hall_sessions')).toEqual([{ binding, session }]);
    // Both halls' journals are the cluster's: b's copy is a's up to b's turn.
    const journalA = fs.readFileSync(path.join(rootA, '.raider', 'sessions', `${session}.jsonl`));
    const journalB = fs.readFileSync(path.join(b.root, '.raider', 'sessions', `${session}.jsonl`));
    expect(journalA.subarray(0, journalB.length).equals(journalB)).toBe(true);
    const [sized] = await query(url, 'SELECT sum(octet_length(data))::integer AS size FROM raider_hall_journal_chunks WHERE session = $1', [
      session,
    ]);
    expect(sized?.size).toBe(journalA.length);
  });

  it('a run on another hall shows in status, streams to attach up to its raider.done, and has its lines in logs, from the other hall', async () => {
    const url = await server.freshDatabase();
    const release = path.join(tempRoot(), 'release');
    const a = await startHallOn(url, 'hall-a');
    const aEvents = await tap(a, 'raider.');
    const spawned = await request(a.socket, { cmd: 'spawn', name: 'bjorn', mission: `chatter ${release} L` });
    const run = await aEvents.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === spawned.mission_id);
    const id = run.id as string;
    const b = await startHallOn(url, 'hall-b');

    // status on b: the cluster's runs, each naming its hall.
    const status = await request(b.socket, { cmd: 'status' });
    expect(status).toMatchObject({ hall: 'hall-b', running: 1, slots: ['bjorn'] });
    expect(status.runs).toEqual([{ id, slot: 'bjorn', pid: run.pid, age: expect.any(Number), hall: 'hall-a' }]);
    expect((await request(a.socket, { cmd: 'status' })).runs).toEqual([expect.objectContaining({ id, hall: 'hall-a' })]);
    const shown = await runCli(['hall', 'status', b.root]);
    expect(shown.stdout).toMatch(/1 running in bjorn/);
    expect(shown.stdout).toMatch(new RegExp(`HALL\\n${id.replace('.', '\\.')} +bjorn +${run.pid} +\\S+ +hall-a\\n`));

    // logs on b: the run's stderr lines, shipped as the run goes.
    await eventually(async () => expect((await request(b.socket, { cmd: 'logs', id })).log).toContain(`[${id}] L before\n`), 10_000);
    // attach on b: b's copy of the run's events file, filled as the run goes.
    const attached = await request(b.socket, { cmd: 'attach', id });
    expect(attached).toMatchObject({ id, slot: 'bjorn', pid: run.pid, hall: 'hall-a' });
    expect(fs.readFileSync(attached.events_path, 'utf8')).toContain('"type":"run.started"');
    const bEvents = await tap(b, 'raider.done');
    const following = attachCli(b.root, id);
    // The CLI prints what the run wrote so far, then the rest as it comes.
    await following.printed('"type":"run.state"');
    fs.writeFileSync(release, '');

    const done = await bEvents.waitFor((e) => e.type === 'raider.done' && e.id === id);
    expect(done).toMatchObject({ hall: 'hall-a', status: 'completed', response: 'L done' });
    const cli = await following.exited;
    expect(cli).toMatchObject({ code: 0, stderr: '' });
    const lines = cli.stdout.split('\n').filter(Boolean);
    expect(lines.map((line) => JSON.parse(line).type)).toEqual(['run.started', 'run.state', 'message', 'run.state', 'run.finished']);
    expect(JSON.parse(lines.at(-1) ?? '{}')).toMatchObject({ status: 'completed', response: 'L done' });

    // Once it ended, logs on b holds all its lines, its result line last, through the socket and the CLI.
    const log = (await request(b.socket, { cmd: 'logs', id })).log as string;
    expect(log).toBe((await request(a.socket, { cmd: 'logs', id })).log);
    expect(log).toContain(`[${id}] L after\n`);
    expect(log.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^\\[hall\\] raider ${id.replace('.', '\\.')} completed`));
    const printed = await runCli(['hall', 'logs', b.root, id]);
    expect(printed).toMatchObject({ code: 0, stdout: log });
    expect(await request(b.socket, { cmd: 'logs', id: 'bjorn-1' })).toEqual({ error: 'raider not found' });
  });
});
