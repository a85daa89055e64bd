/**
 * Warm ACP bridges when something goes wrong around them (docs/agents.md,
 * "Warm bridges"), through real halls, bridges and the scripted agent of
 * test/fixtures: a bridge a run took and did not use is ended and replaced;
 * one that vanished before its hand-over leaves the run to start a bridge of
 * its own; one that cannot start is tried again later, each time later,
 * while runs start their own.
 *
 * A run takes its warm bridge before its record is written and hands the run
 * over after: the tests hold that write in between by locking the runs'
 * table of the hall's PostgreSQL database (the file store gives no such hold).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DATABASE_URL_ENV } from '../../src/adapters/storage/postgres/database-settings.js';
import { useHallBackend } from '../support/hall-backends.js';
import { REPO, tapEvents, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { holdRunRecords, queryDatabase } from '../support/postgres-server.js';
import { groupAlive } from '../support/processes.js';
import { readySpare, warmSpares } from '../support/warm-bridges.js';
import {
  alive,
  eventsFile,
  eventually,
  type HallProcess,
  hall,
  hallRoot,
  removeRoots,
  request,
  socketOf,
  startHallProcess,
} from './cli-helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const FAILING_SPARE = path.join(REPO, 'test', 'fixtures', 'failing-spare.cjs');
const CONFIG = `raiders:\n  warm: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, keep_warm: 1 } }\n`;

/** Once a run has taken the warm bridge `pid`: status lists it no more (it is neither dead nor ended, so it was taken). */
async function taken(root: string, pid: number): Promise<void> {
  await eventually(async () => expect((await warmSpares(root)).map((s) => s.pid)).not.toContain(pid), 30_000, 20);
  expect(alive(pid)).toBe(true);
}

/** What the hall says on its stderr from now on. */
function hallSays(h: HallProcess): () => string {
  let said = '';
  h.child.stderr?.on('data', (d: Buffer) => {
    said += d.toString();
  });
  return () => said;
}

/** Kills the warm bridge a run took, and waits until the hall has seen it end (it says so). */
async function killTaken(root: string, h: HallProcess, pid: number): Promise<void> {
  const said = hallSays(h);
  process.kill(-pid, 'SIGKILL');
  await eventually(() => expect(said()).toContain(`raider warm: a warm bridge (pid ${pid}) ended by itself (SIGKILL)`), 10_000, 20);
  expect(groupAlive(pid)).toBe(false);
  // Another is started in its place at once; the run keeps the one it took.
  expect((await warmSpares(root)).map((s) => s.pid)).not.toContain(pid);
}

/** The id of the one run of `warm` whose events file prepareRun made (its spawn's reply waits for its record). */
function heldRunId(root: string): string {
  const logs = path.join(root, '.raider-hall', 'logs');
  const files = fs.readdirSync(logs).filter((f) => f.startsWith('warm-') && f.endsWith('.events.jsonl'));
  expect(files).toHaveLength(1);
  return (files[0] ?? '').slice(0, -'.events.jsonl'.length);
}

/** A spawn of `warm` whose run took the ready warm bridge and waits for its record, held until `held.release`. */
async function takenAndHeld(root: string, url: string, mission: string) {
  const sparePid = await readySpare(root);
  const held = await holdRunRecords(url);
  const reply = request(socketOf(root), { cmd: 'spawn', name: 'warm', mission });
  // A test that ends its hall before the reply does not wait for it.
  reply.catch(() => undefined);
  await taken(root, sparePid);
  return { id: heldRunId(root), sparePid, reply, held };
}

describe('a warm bridge taken and not handed a run, on postgres', () => {
  const backend = useHallBackend('postgres');

  /** A hall root with `config`, the backend's environment for its halls, and its database's URL. */
  async function onDatabase(config = CONFIG) {
    const env = await backend.env();
    return { root: hallRoot(config), env, url: env[DATABASE_URL_ENV] ?? '' };
  }

  it('a run whose start fails after it took a bridge: the bridge is ended, another is started, and the next run gets it', async () => {
    const { root, env, url } = await onDatabase();
    const h = await startHallProcess(root, env);
    try {
      const tap = await tapEvents(socketOf(root), 'raider.');
      const { id, sparePid, reply, held } = await takenAndHeld(root, url, 'answer never');
      // Its events file gone, the run cannot start once its record is written.
      fs.rmSync(eventsFile(root, id));
      await held.release();
      expect((await reply).error).toMatch(new RegExp(`^command failed: raider ${id} could not be started: ENOENT`));
      expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === id)).toMatchObject({ status: 'failed', pid: 0 });
      expect(tap.all.filter((e) => e.type === 'raider.spawned')).toEqual([]);
      // The bridge and anything of its group are gone; a new one takes its place and the next run goes to it.
      await eventually(() => expect(groupAlive(sparePid)).toBe(false), 10_000, 20);
      const next = await readySpare(root, sparePid);
      const run = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission: 'answer from the next bridge' });
      expect(run.pid).toBe(next);
      expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id)).toMatchObject({
        status: 'completed',
        response: 'from the next bridge',
      });
      expect(await warmSpares(root)).toHaveLength(1);
      tap.close();
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('a run cancelled before its hand-over: the hall hands it over and signals it at once, the run ends cancelled, and nothing of it is left behind', async () => {
    const { root, env, url } = await onDatabase(CONFIG.replace('keep_warm: 1', 'keep_warm: 1, env: { SCRIPTED_ACP_PID_FILE: agent.pid }'));
    const h = await startHallProcess(root, env);
    try {
      const tap = await tapEvents(socketOf(root), 'raider.done');
      const { id, sparePid, reply, held } = await takenAndHeld(root, url, 'hang');
      // Its reply, too, waits for the record.
      const cancelled = request(socketOf(root), { cmd: 'cancel', id });
      await held.release();
      expect(await cancelled).toMatchObject({ cancelled: 1, id });
      expect((await reply).pid).toBe(sparePid);
      // Whether the bridge heard the hand-over before the signal (it cancels the turn) or died by the signal unhandled,
      // the run ends cancelled, with the cancel said and its processes gone.
      expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === id)).toMatchObject({
        status: 'cancelled',
        signaled: 1,
        cancel_requested: true,
        pid: sparePid,
      });
      await eventually(() => expect(groupAlive(sparePid)).toBe(false), 10_000, 20);
      const agentPidFile = path.join(root, 'agent.pid');
      if (fs.existsSync(agentPidFile)) expect(alive(Number(fs.readFileSync(agentPidFile, 'utf8').split(' ')[0]))).toBe(false);
      await readySpare(root, sparePid);
      tap.close();
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('a bridge that dies between its run taking it and the hand-over: the run starts a bridge of its own and completes', async () => {
    const { root, env, url } = await onDatabase();
    const h = await startHallProcess(root, env);
    try {
      const tap = await tapEvents(socketOf(root), 'raider.');
      const release = path.join(root, 'release');
      const { sparePid, reply, held } = await takenAndHeld(root, url, `until ${release}`);
      await killTaken(root, h, sparePid);
      await held.release();
      const run = await reply;
      expect(run.pid).not.toBe(sparePid);
      const spawned = await tap.waitFor((e) => e.type === 'raider.spawned' && e.id === run.id);
      expect(spawned.pid).toBe(run.pid);
      // The run's record names the process that runs it, where a restarted hall would look for it.
      await eventually(async () => {
        const record = await queryDatabase(url, 'SELECT pid FROM raider_hall_runs WHERE id = $1', [run.id]);
        expect(record.rows).toEqual([{ pid: run.pid }]);
      });
      fs.writeFileSync(release, '');
      expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id)).toMatchObject({
        status: 'completed',
        response: `saw ${release}`,
        pid: run.pid,
      });
      const events = fs
        .readFileSync(eventsFile(root, String(run.id)), 'utf8')
        .trim()
        .split('\n');
      expect(JSON.parse(events.at(-1) ?? '{}')).toMatchObject({ type: 'run.finished', status: 'completed' });
      // The run's bridge was not one started ahead: the one started after the death is still unused.
      expect((await warmSpares(root)).map((s) => s.pid)).not.toContain(run.pid);
      tap.close();
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('kill -9 of the hall after such a run started its own bridge, before its pid was recorded: the next hall adopts the run', async () => {
    const { root, env, url } = await onDatabase();
    const release = path.join(root, 'release');
    const first = await startHallProcess(root, env);
    let second: HallProcess | undefined;
    let runPid = 0;
    try {
      // The run's pid is not recorded while this stands: the record keeps the pid of the bridge it took.
      await queryDatabase(
        url,
        `CREATE FUNCTION keep_pid() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.pid IS DISTINCT FROM OLD.pid THEN RAISE EXCEPTION 'the test holds the pid'; END IF; RETURN NEW; END $$`,
      );
      await queryDatabase(url, 'CREATE TRIGGER keep_pid BEFORE UPDATE ON raider_hall_runs FOR EACH ROW EXECUTE FUNCTION keep_pid()');
      const tap = await tapEvents(socketOf(root), 'raider.spawned');
      // Its reply waits for the pid's record: the hall's end ends the wait.
      const { id, sparePid, held } = await takenAndHeld(root, url, `until ${release}`);
      await killTaken(root, first, sparePid);
      await held.release();
      runPid = Number((await tap.waitFor((e) => e.type === 'raider.spawned' && e.id === id)).pid);
      tap.close();
      expect(runPid).not.toBe(sparePid);
      await eventually(() => expect(fs.readFileSync(eventsFile(root, id), 'utf8')).toContain('"session"'), 30_000, 20);
      expect((await queryDatabase(url, 'SELECT pid FROM raider_hall_runs WHERE id = $1', [id])).rows).toEqual([{ pid: sparePid }]);

      first.child.kill('SIGKILL');
      await first.exited;
      expect(alive(runPid)).toBe(true);
      await queryDatabase(url, 'DROP TRIGGER keep_pid ON raider_hall_runs');
      second = await startHallProcess(root, env);
      const done = await tapEvents(socketOf(root), 'raider.done');
      expect((await request(socketOf(root), { cmd: 'ps' })).raiders).toContainEqual(expect.objectContaining({ id, pid: runPid }));
      fs.writeFileSync(release, '');
      expect(await done.waitFor((e) => e.type === 'raider.done' && e.id === id, 30_000)).toMatchObject({
        status: 'completed',
        response: `saw ${release}`,
      });
      done.close();
    } finally {
      await first.stop();
      if (second !== undefined) expect((await second.stop()).code).toBe(0);
      // A hall that did not adopt it leaves the run's bridge and agent running.
      if (runPid > 0 && alive(runPid)) process.kill(-runPid, 'SIGKILL');
    }
  });
});

describe('a warm bridge that cannot start', () => {
  it('is tried again later, each time later, status says so meanwhile, and a run starts its own', async () => {
    const root = hallRoot(CONFIG);
    const starts = path.join(root, 'spare-starts');
    const warmLog = path.join(root, '.raider-hall', 'warm', 'warm.log');
    const h = await startHallProcess(root, {
      RAIDER_HALL_ACP_NODE_FLAGS: `--require ${FAILING_SPARE}`,
      FAILING_SPARE_STARTS: starts,
      FAILING_SPARE_FAILS: '2',
    });
    try {
      const tap = await tapEvents(socketOf(root), 'raider.done');
      // Two starts failed (each says so in the entry's warm log before it exits): status says so, and shows no bridge ready.
      await eventually(() => expect(fs.readFileSync(warmLog, 'utf8')).toContain('start 2 fails on purpose'), 30_000, 20);
      await eventually(async () => {
        const status = await request(socketOf(root), { cmd: 'status' });
        expect(status.warm_bridge_retries).toEqual({ warm: { failed_starts: 2, retry_in: expect.any(Number) } });
        expect(status.warm_bridge_retries.warm.retry_in).toBeLessThanOrEqual(2);
        expect(status.warm_bridges).toEqual({ warm: [] });
      });
      const run = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission: 'answer cold' });
      expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id, 30_000)).toMatchObject({
        status: 'completed',
        response: 'cold',
      });
      // The third start works; the starts came one second, then two seconds after the one before, at least.
      const sparePid = await readySpare(root);
      expect(await request(socketOf(root), { cmd: 'status' })).not.toHaveProperty('warm_bridge_retries');
      const times = fs.readFileSync(starts, 'utf8').trim().split('\n').map(Number);
      expect(times).toHaveLength(3);
      expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(1000);
      expect((times[2] ?? 0) - (times[1] ?? 0)).toBeGreaterThanOrEqual(2000);
      expect((await hall(['status'], root)).stdout).toMatch(new RegExp(`^warm +${sparePid} +\\d+s +ready$`, 'm'));
      const warm = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission: 'answer warm again' });
      expect(warm.pid).toBe(sparePid);
      expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === warm.id, 30_000)).toMatchObject({ status: 'completed' });
      tap.close();
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('an agent that exits at once fails each run handed to a bridge, with its reason; the bridges are fine and started once a run', async () => {
    const root = hallRoot(CONFIG.replace('keep_warm: 1', 'keep_warm: 1, env: { SCRIPTED_ACP_START: exit }'));
    const starts = path.join(root, 'spare-starts');
    const h = await startHallProcess(root, { RAIDER_HALL_ACP_NODE_FLAGS: `--require ${FAILING_SPARE}`, FAILING_SPARE_STARTS: starts });
    try {
      const tap = await tapEvents(socketOf(root), 'raider.done');
      const error =
        'the agent exited during initialize (exit code 2); its last stderr lines:\n' +
        'scripted agent: no config found\nscripted agent: giving up';
      let sparePid = 0;
      for (const mission of ['answer one', 'answer two']) {
        sparePid = await readySpare(root, sparePid);
        const run = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission });
        expect(run.pid).toBe(sparePid);
        expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id, 30_000)).toMatchObject({ status: 'failed', error });
      }
      // The one started ahead, and one after each run: no more.
      await readySpare(root, sparePid);
      expect(fs.readFileSync(starts, 'utf8').trim().split('\n')).toHaveLength(3);
      expect(await request(socketOf(root), { cmd: 'status' })).not.toHaveProperty('warm_bridge_retries');
      tap.close();
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });
});

describe('a warm bridge that ends by itself once ready', () => {
  /** Each `status` the test asks for, from now on, and whether any said that starts failed. */
  function statusWatch(root: string) {
    const seen: { warm_bridge_retries?: unknown }[] = [];
    return {
      seen,
      async spares() {
        const status = await request(socketOf(root), { cmd: 'status' });
        seen.push(status);
        return (status.warm_bridges?.warm ?? []) as { pid: number | null; ready: boolean; age: number }[];
      },
    };
  }

  it('soon after it got ready, again and again: each next start waits as after a failed start, 1 s, then 2 s, and status says so', async () => {
    const root = hallRoot(CONFIG);
    const starts = path.join(root, 'spare-starts');
    const h = await startHallProcess(root, { RAIDER_HALL_ACP_NODE_FLAGS: `--require ${FAILING_SPARE}`, FAILING_SPARE_STARTS: starts });
    const said = hallSays(h);
    try {
      let pid = await readySpare(root);
      const killedAt: number[] = [];
      for (const [n, wait] of [
        [1, 1],
        [2, 2],
      ] as const) {
        killedAt.push(Date.now());
        process.kill(pid, 'SIGKILL');
        // While the next start waits, status says how many failed and when it is; no bridge is listed meanwhile.
        await eventually(async () => {
          const status = await request(socketOf(root), { cmd: 'status' });
          expect(status.warm_bridge_retries).toEqual({ warm: { failed_starts: n, retry_in: expect.any(Number) } });
          expect(status.warm_bridge_retries.warm.retry_in).toBeLessThanOrEqual(wait);
          expect(status.warm_bridges).toEqual({ warm: [] });
        });
        expect(said()).toContain(
          `raider warm: a warm bridge (pid ${pid}) ended by itself (SIGKILL) within 10 s of getting ready, a failed start`,
        );
        pid = await readySpare(root, pid);
      }
      const times = fs.readFileSync(starts, 'utf8').trim().split('\n').map(Number);
      expect(times).toHaveLength(3);
      expect((times[1] ?? 0) - (killedAt[0] ?? 0)).toBeGreaterThanOrEqual(1000);
      expect((times[2] ?? 0) - (killedAt[1] ?? 0)).toBeGreaterThanOrEqual(2000);
      // The one that got ready after them is used by a run; so it proved itself, and the count starts again.
      const tap = await tapEvents(socketOf(root), 'raider.done');
      const run = await request(socketOf(root), { cmd: 'spawn', name: 'warm', mission: 'answer from a bridge that lived' });
      expect(run.pid).toBe(pid);
      expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id, 30_000)).toMatchObject({ status: 'completed' });
      tap.close();
      const next = await readySpare(root, pid);
      process.kill(next, 'SIGKILL');
      await eventually(async () => {
        const status = await request(socketOf(root), { cmd: 'status' });
        expect(status.warm_bridge_retries).toEqual({ warm: { failed_starts: 1, retry_in: expect.any(Number) } });
      });
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });

  it('long after it got ready: started again at once, no failed start', async () => {
    const root = hallRoot(CONFIG);
    const h = await startHallProcess(root);
    try {
      const watch = statusWatch(root);
      let readyAge = 0;
      let pid = 0;
      await eventually(
        async () => {
          const ready = (await watch.spares()).find((s) => s.ready && s.pid !== null);
          expect(ready).toBeDefined();
          readyAge = ready?.age ?? 0;
          pid = ready?.pid ?? 0;
        },
        30_000,
        20,
      );
      // The hall saw it ready before the test did: past this age, it has been ready longer than 10 s.
      await eventually(
        async () => expect((await watch.spares()).find((s) => s.pid === pid)?.age).toBeGreaterThan(readyAge + 10.5),
        30_000,
        100,
      );
      process.kill(pid, 'SIGKILL');
      await eventually(async () => expect((await watch.spares()).filter((s) => s.pid !== pid)).toHaveLength(1), 10_000, 20);
      expect(watch.seen.filter((s) => s.warm_bridge_retries !== undefined)).toEqual([]);
      await readySpare(root, pid);
    } finally {
      expect((await h.stop()).code).toBe(0);
    }
  });
});
