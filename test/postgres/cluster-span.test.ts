// What a run leaves on its hall's host, seen from the other halls of a shared
// cluster: real hall processes (bin/raider hall start) on separate roots
// against one embedded PostgreSQL. A binding's session journal follows the
// binding to whichever hall runs its next mission; `status`, `attach` and
// `logs` on one hall answer for a run on another.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { PostgresJournals } from '../../src/adapters/storage/postgres/journal-sync.js';
import { closedAfterEachTest, type HallProcess, roomHolders } from '../support/cluster-hall-processes.js';
import { migratedPool, queryRows as query, usePostgresServer } from '../support/postgres-server.js';
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
} from '../support/hall-client.js';

const server = usePostgresServer();

const { halls, taps } = closedAfterEachTest();

async function startHallOn(url: string, id: string, root = tempRoot(), maxRunning = 2): Promise<HallProcess> {
  fs.writeFileSync(
    path.join(root, '.raider-hall.yml'),
    `raiders: { bjorn: {}, ulf: {} }\nstorage: { postgres: "${url}" }\ncluster: team-a\ncluster_mode: shared\n` +
      `hall_id: ${id}\nlease_seconds: 2\nmax_running: ${maxRunning}\n`,
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

// One after the other: side by side, the halls' start-ups compete for the same cores (2 on CI).
describe('a shared cluster', () => {
  it("a binding continues its session on another hall: the journal there holds the other hall's turns", async () => {
    const url = await server.freshDatabase();
    const binding = 'telegram:ops:7';
    // One raider at a time per hall: a hall that holds a run leaves the binding's next mission to the other.
    const [one, two] = await Promise.all([startHallOn(url, 'hall-1', tempRoot(), 1), startHallOn(url, 'hall-2', tempRoot(), 1)]);
    if (!one || !two) throw new Error('no halls');
    const events = await tap(one);
    const { hold, release } = roomHolders(one, events, [one, two], tempRoot());
    const turn = (text: string) => runOn(one, events, { name: 'ulf', binding, mission: `journal ${text}` });

    const x = await hold('h1');
    const y = x === one ? two : one;
    const first = await turn('one');
    expect(first).toMatchObject({ status: 'completed', hall: y.id, binding });
    const session = first.session as string;
    expect(JSON.parse(first.response)).toEqual([`one@${y.root}`]);

    expect(await hold('h2')).toBe(y);
    release('h1');
    const second = await turn('two');
    expect(second).toMatchObject({ status: 'completed', hall: x.id, session });
    expect(JSON.parse(second.response)).toEqual([`one@${y.root}`, `two@${x.root}`]);

    // Back on the first hall, whose copy of the journal lacks the other's turn until the run starts.
    expect(await hold('h3')).toBe(x);
    release('h2');
    const third = await turn('three');
    expect(third).toMatchObject({ status: 'completed', hall: y.id, session });
    expect(JSON.parse(third.response)).toEqual([`one@${y.root}`, `two@${x.root}`, `three@${y.root}`]);
    release('h3');

    // One session all along: bound once (by the first run), as the sessions table says.
    expect(events.all.filter((e) => e.type === 'session.bound')).toEqual([expect.objectContaining({ binding, session, hall: y.id })]);
    expect(await query(url, 'SELECT binding, session FROM raider_hall_sessions')).toEqual([{ binding, session }]);
    // Both copies are the cluster's: x's is y's up to x's turn, and the cluster has all of y's.
    const journalX = fs.readFileSync(path.join(x.root, '.raider', 'sessions', `${session}.jsonl`));
    const journalY = fs.readFileSync(path.join(y.root, '.raider', 'sessions', `${session}.jsonl`));
    expect(journalY.subarray(0, journalX.length).equals(journalX)).toBe(true);
    // The last run's journal goes to the cluster with the commit of its end, which raider.done need not wait for.
    await eventually(async () => {
      const [sized] = await query(
        url,
        'SELECT sum(octet_length(data))::integer AS size FROM raider_hall_journal_chunks WHERE session = $1',
        [session],
      );
      expect(sized?.size).toBe(journalY.length);
    });
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
    expect(await request(b.socket, { cmd: 'logs', id: 'bjorn-1' })).toEqual({ error: 'raider not found', code: 'run_not_found' });

    // attach once it ended: b replays it from the cluster as a replays it from its own files; an unknown run is still not found.
    const [here, there, unknown] = await Promise.all([
      runCli(['hall', 'attach', a.root, id, '--json']),
      runCli(['hall', 'attach', b.root, id, '--json']),
      runCli(['hall', 'attach', b.root, 'bjorn-1']),
    ]);
    expect(here).toMatchObject({ code: 0, stderr: `run ${id} ended: completed\n` });
    expect(here.stdout).toContain('"response":"L done"');
    expect(there).toEqual(here);
    expect(unknown).toMatchObject({ code: 1, stderr: expect.stringContaining('raider not found') });
  });

  it("a journal's copies: a hall's run adds a piece; another hall's copy gets the pieces it lacks, or the cluster's copy when its own went its own way", async () => {
    const url = await server.freshDatabase();
    const pool = await migratedPool(url, 2);
    try {
      const warnings: string[] = [];
      const session = '20261202-080000-abcd';
      const [rootA, rootB] = [tempRoot(), tempRoot()];
      const journalOf = (root: string) => path.join(root, '.raider', 'sessions', `${session}.jsonl`);
      const a = new PostgresJournals(pool, 'c1', 'hall-a', rootA, (w) => warnings.push(w));
      const b = new PostgresJournals(pool, 'c1', 'hall-b', rootB, (w) => warnings.push(w));
      const ranOn = (hall: string, runId: string) =>
        pool.query("INSERT INTO raider_hall_runs (cluster, id, hall, slot, mission_id, record) VALUES ('c1', $1, $2, 'ulf', $1, '{}')", [
          runId,
          hall,
        ]);
      const push = async (journals: PostgresJournals, runId: string) => {
        const client = await pool.connect();
        try {
          await journals.push(client, session, runId);
        } finally {
          client.release();
        }
      };
      const read = (root: string) => fs.readFileSync(journalOf(root), 'utf8');

      fs.mkdirSync(path.dirname(journalOf(rootA)), { recursive: true });
      fs.writeFileSync(journalOf(rootA), 'one\n');
      await ranOn('hall-a', 'ulf-1');
      await push(a, 'ulf-1');
      await push(a, 'ulf-1'); // sent again (a retried batch): nothing more
      await b.pull(session);
      expect(read(rootB)).toBe('one\n');

      fs.appendFileSync(journalOf(rootB), 'two\n');
      await ranOn('hall-b', 'ulf-2');
      await push(b, 'ulf-2');
      await a.pull(session);
      expect(read(rootA)).toBe('one\ntwo\n');

      // Hall a, taken for lost, runs on alone: its turn never reaches the cluster; b's does.
      fs.appendFileSync(journalOf(rootA), 'lost\n');
      await push(a, 'ulf-2'); // not a's run any more
      fs.appendFileSync(journalOf(rootB), 'thre\n');
      await ranOn('hall-b', 'ulf-3');
      await push(b, 'ulf-3');
      expect(read(rootA)).toHaveLength(read(rootB).length);
      // The replacement is fsynced, and so is its directory after the rename (a crash keeps one whole journal).
      const opened = new Map<number, string>();
      const synced: string[] = [];
      const { openSync, fsyncSync } = fs;
      vi.spyOn(fs, 'openSync').mockImplementation((file: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode | null) => {
        const fd = openSync(file, flags ?? 'r', mode);
        opened.set(fd, String(file));
        return fd;
      });
      vi.spyOn(fs, 'fsyncSync').mockImplementation((fd: number) => {
        synced.push(opened.get(fd) ?? `fd ${fd}`);
        fsyncSync(fd);
      });
      try {
        await a.pull(session);
      } finally {
        vi.restoreAllMocks();
      }
      expect(synced).toEqual([`${journalOf(rootA)}.tmp-${process.pid}`, path.dirname(journalOf(rootA))]);
      expect(read(rootA)).toBe('one\ntwo\nthre\n');
      expect(warnings).toEqual([`the journal of session ${session} here differs from the cluster's; replaced by the cluster's (13 bytes)`]);
      const pieces = await query(url, 'SELECT start, hall FROM raider_hall_journal_chunks ORDER BY start');
      expect(pieces).toEqual([
        { start: '0', hall: 'hall-a' },
        { start: '4', hall: 'hall-b' },
        { start: '8', hall: 'hall-b' },
      ]);

      // The sweep: a journal goes once no binding holds its session and no run goes on with it.
      const piece = (of: string) =>
        pool.query("INSERT INTO raider_hall_journal_chunks (cluster, session, start, data, hall) VALUES ('c1', $1, 0, 'x', 'hall-a')", [
          of,
        ]);
      await pool.query("INSERT INTO raider_hall_sessions (cluster, binding, session) VALUES ('c1', 'telegram:ops:1', $1)", [session]);
      await piece('reset-while-running');
      await pool.query(
        'INSERT INTO raider_hall_runs (cluster, id, hall, slot, mission_id, record) VALUES ($1, $2, $3, $4, $2, $5::jsonb)',
        ['c1', 'ulf-4', 'hall-a', 'ulf', JSON.stringify({ session: 'reset-while-running' })],
      );
      await piece('reset');
      // An ACP session whose client left (its binding went): session/load may bring it back on any hall.
      await piece('acp-remembered');
      await pool.query("INSERT INTO raider_hall_kv (cluster, ns, key, value) VALUES ('c1', 'acp', 'acp-remembered', '{}')");
      await piece('of-another-cluster');
      await pool.query("UPDATE raider_hall_journal_chunks SET cluster = 'c2' WHERE session = 'of-another-cluster'");
      await a.prune();
      const sessionsLeft = async () =>
        (await query(url, 'SELECT DISTINCT session FROM raider_hall_journal_chunks ORDER BY session')).map((r) => r.session);
      expect(await sessionsLeft()).toEqual([session, 'acp-remembered', 'of-another-cluster', 'reset-while-running'].sort());
      // Its run ended, the binding was reset, and the ACP session closed (forgotten): all three go.
      await pool.query("DELETE FROM raider_hall_runs WHERE id = 'ulf-4'");
      await pool.query("DELETE FROM raider_hall_sessions WHERE binding = 'telegram:ops:1'");
      await pool.query("DELETE FROM raider_hall_kv WHERE ns = 'acp'");
      await b.prune();
      expect(await sessionsLeft()).toEqual(['of-another-cluster']);
    } finally {
      await pool.end();
    }
  });
});
