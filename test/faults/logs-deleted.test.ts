/**
 * Somebody deletes `.raider-hall/logs` while raiders run (issue 9, fault
 * tests). The hall keeps running, still reads each run's result, writes its
 * log lines into a new directory, and later runs go on as before.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runStarted, startTestHall, type TestHall } from '../support/test-hall.js';
import { ODD_RAIDER } from './odd-raider-path.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

describe('the logs directory deleted during a run', () => {
  it('the running raiders are still reported with their results, and later runs work', async () => {
    hall = await startTestHall({ config: 'raiders: { odd: {} }\n', env: { RAIDER_HALL_RAIDER_BIN: ODD_RAIDER } });
    const h = hall;
    const logsDir = path.join(h.root, '.raider-hall', 'logs');
    const flag = path.join(h.root, 'go');
    const tap = await h.events('raider.');
    const first = await h.request({ cmd: 'spawn', name: 'odd', mission: `until ${flag}` });
    const second = await h.request({ cmd: 'spawn', name: '1odd', mission: `until ${flag}` });
    await runStarted(first.events_path);
    await runStarted(second.events_path);

    fs.rmSync(logsDir, { recursive: true, force: true });
    expect(await h.request({ cmd: 'status' })).toMatchObject({ running: 2 });
    fs.writeFileSync(flag, '');

    const doneFirst = await tap.waitFor((e) => e.type === 'raider.done' && e.id === first.id);
    const doneSecond = await tap.waitFor((e) => e.type === 'raider.done' && e.id === second.id);
    expect(doneFirst).toMatchObject({ status: 'completed', response: `saw ${flag}` });
    expect(doneSecond).toMatchObject({ status: 'completed', response: `saw ${flag}` });

    // The result lines went into new slot logs.
    expect(fs.readFileSync(path.join(logsDir, 'odd.log'), 'utf8')).toContain(`[hall] raider ${first.id} completed: saw ${flag}`);
    expect(fs.readFileSync(path.join(logsDir, '1odd.log'), 'utf8')).toContain(`[hall] raider ${second.id} completed: saw ${flag}`);
    expect(await h.request({ cmd: 'logs', id: first.id })).toEqual({ log: expect.stringContaining(`completed: saw ${flag}`) });

    // Later runs, on the same slots and a new one, work as before.
    for (const name of ['odd', '1odd', 'fresh']) {
      const reply = await h.request({ cmd: 'spawn', name, mission: 'answer again' });
      const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === reply.id);
      expect(done).toMatchObject({ status: 'completed', response: 'did: answer again' });
      expect(fs.existsSync(reply.events_path as string)).toBe(true);
    }
    expect(await h.request({ cmd: 'status' })).toMatchObject({ running: 0 });
    expect(h.logs.filter((l) => /failed|uncaught/i.test(l))).toEqual([]);
    tap.close();
  });

  it('deleted while the hall is idle: the next run makes it again', async () => {
    hall = await startTestHall({ config: 'raiders: { odd: {} }\n', env: { RAIDER_HALL_RAIDER_BIN: ODD_RAIDER } });
    const h = hall;
    const tap = await h.events('raider.done');
    const a = await h.request({ cmd: 'spawn', name: 'odd', mission: 'one' });
    await tap.waitFor((e) => e.id === a.id);
    fs.rmSync(path.join(h.root, '.raider-hall', 'logs'), { recursive: true, force: true });
    const b = await h.request({ cmd: 'spawn', name: 'odd', mission: 'two' });
    expect(b.id).toEqual(expect.any(String));
    expect(await tap.waitFor((e) => e.id === b.id)).toMatchObject({ status: 'completed', response: 'did: two' });
    expect(await h.request({ cmd: 'logs', id: b.id })).toEqual({ log: expect.stringContaining(`[hall] raider ${b.id} started`) });
    tap.close();
  });
});
