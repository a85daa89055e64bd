/**
 * A cancel that comes before a raider handles SIGINT: the raider is still
 * starting (test/fixtures/held-start.cjs holds it before its own code runs),
 * the hall's SIGINT meets the default action and the raider dies by it with
 * no `run.finished`. Somebody asked for that cancel and the run stopped by
 * the hall's signal: the run ends `cancelled` (docs/protocol.md, `raider.done`),
 * for the built-in raider and for an ACP bridge started for its run alike,
 * and for a run cancelled before its raider was started at all (held
 * between its take and its start: on PostgreSQL, by a lock on the runs'
 * table that holds its record), whose raider gets the SIGINT once it is.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_URL_ENV } from '../../src/adapters/storage/postgres/database-settings.js';
import { useHallBackend } from '../support/hall-backends.js';
import { holdRunRecords } from '../support/postgres-server.js';
import { FAKE_RAIDER, REPO, eventually, startTestHall, type TestHall, tempRoot } from '../support/test-hall.js';
import { SCRIPTED_ACP_AGENT } from '../support/hall-client.js';

const HELD_START = path.join(REPO, 'test', 'fixtures', 'held-start.cjs');

let hall: TestHall | undefined;
let gate = '';
afterEach(async () => {
  // A raider the test did not end goes on from its start, and the hall's stop ends it.
  if (gate !== '') fs.writeFileSync(gate, '');
  await hall?.stop();
  hall = undefined;
});

/**
 * A hall whose raiders are held in their start until the test's gate opens: the real `raider`
 * unless `env` names another (RAIDER_HALL_RAIDER_BIN), and whatever else `env` adds.
 */
async function heldHall(config: string, env: Record<string, string | undefined> = {}): Promise<{ h: TestHall; started: string }> {
  const root = tempRoot();
  const started = path.join(root, 'held-started');
  gate = path.join(root, 'held-gate');
  hall = await startTestHall({
    root,
    config,
    env: {
      RAIDER_HALL_RAIDER_BIN: undefined,
      NODE_OPTIONS: `--require ${HELD_START}`,
      HELD_START_GATE: gate,
      HELD_START_STARTED: started,
      ...env,
    },
  });
  return { h: hall, started };
}

/** Spawns `name`, cancels the run while its raider is held in its start, and returns its `raider.done`. */
async function cancelledWhileStarting(h: TestHall, started: string, name: string) {
  const tap = await h.events('raider.');
  const reply = await h.request({ cmd: 'spawn', name, mission: 'look at the files' });
  await eventually(() => expect(fs.readFileSync(started, 'utf8')).toContain(`${reply.id} ${reply.pid}\n`), 30_000, 10);
  expect(await h.request({ cmd: 'cancel', id: reply.id })).toEqual({ cancelled: 1, id: reply.id });
  const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === reply.id, 30_000);
  const signals = tap.all.filter((e) => e.type === 'raider.signal' && e.id === reply.id).map((e) => e.signal);
  tap.close();
  // Nothing of it ran: no result in its events file.
  expect(fs.readFileSync(String(reply.events_path), 'utf8')).not.toContain('run.finished');
  return { id: String(reply.id), done, signals };
}

describe('a cancel before the raider handles SIGINT ends the run cancelled', () => {
  it('the built-in raider, still loading: cancelled by the SIGINT alone', async () => {
    const { h, started } = await heldHall('raiders:\n  bjorn: { engine: scripted, persona: caveman, packs: [] }\ncancel_grace: 30\n');
    const { id, done, signals } = await cancelledWhileStarting(h, started, 'bjorn');
    expect(done).toMatchObject({
      status: 'cancelled',
      exit_code: 0,
      signaled: 1,
      cancel_requested: true,
      error: `raider ${id} ended without a result (killed by signal 2)`,
    });
    expect(done.hall_stop).toBeUndefined();
    expect(signals).toEqual(['SIGINT']);
    const log = fs.readFileSync(path.join(h.root, '.raider-hall', 'logs', 'bjorn.log'), 'utf8');
    expect(log).toContain(`[hall] raider ${id} cancelled: raider ${id} ended without a result (killed by signal 2)\n`);
  });

  it('an ACP bridge started for its run, still loading: cancelled, and no agent was started', async () => {
    const config = `raiders:\n  claude: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_PID_FILE: agent.pid } } }\ncancel_grace: 30\n`;
    const { h, started } = await heldHall(config);
    const { done, signals } = await cancelledWhileStarting(h, started, 'claude');
    expect(done).toMatchObject({ status: 'cancelled', signaled: 1, cancel_requested: true });
    expect(signals).toEqual(['SIGINT']);
    expect(fs.existsSync(path.join(h.root, 'agent.pid'))).toBe(false);
  });
});

describe('a cancel between the take and the start, on postgres', () => {
  const backend = useHallBackend('postgres');

  it('a run cancelled while its record is being written: its raider gets the SIGINT as soon as it is started, and the run ends cancelled', async () => {
    const env = await backend.env();
    const { h, started } = await heldHall('raiders:\n  bjorn: {}\ncancel_grace: 30\n', { ...env, RAIDER_HALL_RAIDER_BIN: FAKE_RAIDER });
    const tap = await h.events('raider.');
    const held = await holdRunRecords(env[DATABASE_URL_ENV] ?? '');
    const spawned = h.request({ cmd: 'spawn', name: 'bjorn', mission: 'wait 30' });
    // A test that fails before the reply does not wait for it.
    spawned.catch(() => undefined);
    // The run is made (prepareRun wrote its events file) and waits for its record: its raider is not started.
    const logs = path.join(h.root, '.raider-hall', 'logs');
    const id = await eventually(() => {
      const files = fs.readdirSync(logs).filter((f) => f.startsWith('bjorn-') && f.endsWith('.events.jsonl'));
      expect(files).toHaveLength(1);
      return (files[0] ?? '').slice(0, -'.events.jsonl'.length);
    });
    const cancelled = h.request({ cmd: 'cancel', id });
    expect(fs.existsSync(started)).toBe(false);
    await held.release();
    expect(await cancelled).toEqual({ cancelled: 1, id });
    const reply = await spawned;
    expect(reply.id).toBe(id);
    const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === id, 30_000);
    expect(done).toMatchObject({
      status: 'cancelled',
      pid: reply.pid,
      signaled: 1,
      cancel_requested: true,
      error: `raider ${id} ended without a result (killed by signal 2)`,
    });
    expect(tap.all.filter((e) => e.type === 'raider.signal' && e.id === id).map((e) => e.signal)).toEqual(['SIGINT']);
    tap.close();
  });
});
