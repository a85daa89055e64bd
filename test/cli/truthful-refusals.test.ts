/**
 * An id that names no live run is answered with what is true of it, in words
 * and with a code a program decides on: the run ended (with its status and
 * when), the mission was dropped, the id is a waiting mission (and what works
 * on it); "raider not found" (run_not_found) only when the hall knows nothing of it.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { eventually, startTestHall, type TestHall } from '../support/test-hall.js';
import { hall as cli, removeRoots } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const halls: TestHall[] = [];
afterEach(() => Promise.all(halls.splice(0).map((hall) => hall.stop())));
afterAll(removeRoots);

/** A hall with bjorn's entry, stopped after the test. */
async function started(): Promise<TestHall> {
  const hall = await startTestHall({ config: 'raiders:\n  bjorn: {}\n' });
  halls.push(hall);
  return hall;
}

const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';

/** A hall whose 1bjorn runs a long mission, with a second one waiting behind it: the waiting mission's id. */
async function oneWaiting(hall: TestHall): Promise<string> {
  expect(await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 600' })).toMatchObject({ id: expect.any(String) });
  const queued = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer later' });
  expect(queued).toMatchObject({ queued: 1, mission_id: expect.any(String) });
  return String(queued.mission_id);
}

describe('refusals that say what is true', () => {
  it('cancel and kill of a run that ended say it ended, with its status and when', async () => {
    const hall = await started();
    const done = await hall.events('raider.done');
    const spawned = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer done' });
    const id = String(spawned.id);
    await done.waitFor((e) => e.id === id);
    await eventually(async () => expect((await hall.request({ cmd: 'ps' })).raiders).toEqual([]));

    for (const verb of ['cancel', 'kill']) {
      const said = await cli([verb, id], hall.root);
      expect(said.code, said.stderr).toBe(1);
      expect(said.stdout).toBe('');
      expect(said.stderr).toMatch(new RegExp(`^Hall: run ${id} has ended \\(completed at ${ISO}\\): there is nothing to ${verb}\\n$`));
      expect(await hall.request({ cmd: verb, id })).toEqual({ error: expect.stringContaining('has ended'), code: 'run_ended' });
    }
  });

  it('cancel of a mission already dropped says it was dropped', async () => {
    const h = await started();
    const missionId = await oneWaiting(h);
    expect(await cli(['cancel', missionId], h.root)).toMatchObject({ code: 0, stdout: expect.stringContaining('Dropped mission') });

    const again = await cli(['cancel', missionId], h.root);
    expect(again.code, again.stderr).toBe(1);
    expect(again.stderr).toMatch(
      new RegExp(`^Hall: mission ${missionId} was dropped \\(cancelled\\) at ${ISO}; it has not run and will not\\n$`),
    );
    expect(await h.request({ cmd: 'cancel', id: missionId })).toEqual({
      error: expect.stringContaining('was dropped'),
      code: 'mission_dropped',
    });
  });

  it("attach, logs and kill of a waiting mission's id say it waits and what works on it", async () => {
    const h = await started();
    const missionId = await oneWaiting(h);
    for (const verb of ['attach', 'logs', 'kill']) {
      const said = await cli([verb, missionId], h.root);
      expect(said.code, said.stderr).toBe(1);
      expect(said.stderr).toBe(
        `Hall: ${missionId} is a mission waiting in the queue of 1bjorn (position 1); it has no run to ${verb} yet: ` +
          `\`raider hall cancel ${missionId}\` drops it, \`raider hall queue --front ${missionId}\` moves it to the front\n`,
      );
      expect(await h.request({ cmd: verb, id: missionId })).toEqual({ error: expect.stringContaining('waiting'), code: 'mission_waiting' });
    }
    // It still waits: none of those touched it.
    expect((await h.request({ cmd: 'status' })).waiting).toEqual([{ mission_id: missionId, slot: '1bjorn', position: 1 }]);
  });

  it('an id the hall knows nothing of is still "raider not found", now with run_not_found', async () => {
    const h = await started();
    for (const cmd of ['cancel', 'kill', 'attach', 'logs'])
      expect(await h.request({ cmd, id: 'nobody-1700000000' })).toEqual({ error: 'raider not found', code: 'run_not_found' });
    expect(await cli(['kill', 'nobody-1700000000'], h.root)).toMatchObject({ code: 1, stderr: 'Hall: raider not found\n' });
  });
});
