/**
 * A cancel that comes before a raider handles SIGINT: the raider is still
 * starting (test/fixtures/held-start.cjs holds it before its own code runs),
 * the hall's SIGINT meets the default action and the raider dies by it with
 * no `run.finished`. Somebody asked for that cancel and the run stopped by
 * the hall's signal: the run ends `cancelled` (docs/protocol.md, `raider.done`),
 * for the built-in raider and for an ACP bridge started for its run alike.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, eventually, startTestHall, type TestHall, tempRoot } from '../support/test-hall.js';

const HELD_START = path.join(REPO, 'test', 'fixtures', 'held-start.cjs');
const AGENT = path.join(REPO, 'test', 'fixtures', 'scripted-acp-agent.mjs');

let hall: TestHall | undefined;
let gate = '';
afterEach(async () => {
  // A raider the test did not end goes on from its start, and the hall's stop ends it.
  if (gate !== '') fs.writeFileSync(gate, '');
  await hall?.stop();
  hall = undefined;
});

/** A hall whose raiders (the real `raider`, not the fake one) are held in their start until the test's gate opens. */
async function heldHall(config: string): Promise<{ h: TestHall; started: string }> {
  const root = tempRoot();
  const started = path.join(root, 'held-started');
  gate = path.join(root, 'held-gate');
  hall = await startTestHall({
    root,
    config,
    env: { RAIDER_HALL_RAIDER_BIN: undefined, NODE_OPTIONS: `--require ${HELD_START}`, HELD_START_GATE: gate, HELD_START_STARTED: started },
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
    const config = `raiders:\n  claude: { acp: { command: ${JSON.stringify(AGENT)}, env: { SCRIPTED_ACP_PID_FILE: agent.pid } } }\ncancel_grace: 30\n`;
    const { h, started } = await heldHall(config);
    const { done, signals } = await cancelledWhileStarting(h, started, 'claude');
    expect(done).toMatchObject({ status: 'cancelled', signaled: 1, cancel_requested: true });
    expect(signals).toEqual(['SIGINT']);
    expect(fs.existsSync(path.join(h.root, 'agent.pid'))).toBe(false);
  });
});
