import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, runStarted, startTestHall, type Json, type TestHall } from '../support/test-hall.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

async function spawnAndCancel(h: TestHall, mission: string, how: 'cancel' | 'kill'): Promise<{ done: Json; ms: number }> {
  const tap = await h.events('raider.');
  const reply = await h.request({ cmd: 'spawn', name: 'bjorn', mission });
  await runStarted(reply.events_path);
  const t0 = Date.now();
  expect(await h.request({ cmd: how, id: reply.id })).toEqual(
    how === 'cancel' ? { cancelled: 1, id: reply.id } : { killed: 1, id: reply.id },
  );
  const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === reply.id);
  tap.close();
  return { done, ms: Date.now() - t0 };
}

describe('cancel and kill with real processes (cancel_grace 0.3)', () => {
  const config = 'raiders: { bjorn: {} }\ncancel_grace: 0.3\n';

  it('an obedient raider ends cancelled on SIGINT alone', async () => {
    hall = await startTestHall({ config });
    const { done, ms } = await spawnAndCancel(hall, 'wait 30', 'cancel');
    // `cancelled` with exit 0 is the raider's own answer to SIGINT; a SIGTERM would have made it `interrupted`.
    expect(done).toMatchObject({ status: 'cancelled', signaled: 1, exit_code: 0, cancel_requested: true });
    expect(ms).toBeLessThan(30_000);
  });

  it('a raider deaf to SIGINT gets SIGTERM after the grace and ends interrupted', async () => {
    hall = await startTestHall({ config });
    const { done, ms } = await spawnAndCancel(hall, 'deaf-int 30', 'cancel');
    expect(done).toMatchObject({ status: 'interrupted', signaled: 1 });
    expect(ms).toBeGreaterThanOrEqual(290);
  });

  it('a raider deaf to SIGINT and SIGTERM is SIGKILLed after twice the grace', async () => {
    hall = await startTestHall({ config });
    const { done, ms } = await spawnAndCancel(hall, 'deaf 30', 'cancel');
    expect(done).toMatchObject({ status: 'failed', signaled: 1, error: `raider ${done.id} ended without a result (killed by signal 9)` });
    expect(ms).toBeGreaterThanOrEqual(590);
  });

  it('kill sends SIGTERM: the run ends interrupted', async () => {
    hall = await startTestHall({ config });
    const { done } = await spawnAndCancel(hall, 'wait 30', 'kill');
    expect(done).toMatchObject({ status: 'interrupted', signaled: 1 });
    expect(done.cancel_requested).toBeUndefined();
  });

  it('what a raider leaves behind in its process group dies with it', async () => {
    hall = await startTestHall({ config });
    const tap = await hall.events('raider.done');
    const reply = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'children 30' });
    const done = await tap.waitFor((e) => e.id === reply.id);
    const child = Number(/child (\d+)/.exec(done.response)![1]);
    await eventually(() => expect(gone(child)).toBe(true), 3000);
  });
});

describe('shutdown', () => {
  it('SIGTERMs the raiders, reports them, keeps waiting missions on disk, removes socket and pid file', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    const root = hall.root;
    const tap = await hall.events('');
    const a = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'wait 30' });
    await runStarted(a.events_path);
    // It waits for a flag once it runs: the next hall starts it at boot, and a start takes well under
    // the round trip of a new spawn, so an answer at once could end before the next one is sent.
    const flag = path.join(root, 'go');
    const b = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: `until ${flag}` });
    expect(b).toMatchObject({ queued: 1, queue_depth: 1 });
    const t0 = Date.now();
    await hall.stop();
    hall = undefined;
    // Well under the 5 s SIGTERM grace: the raider obeyed SIGTERM (its raider.signal) and was not waited out.
    expect(Date.now() - t0).toBeLessThan(4500);
    const types = tap.all.map((e) => e.type);
    expect(types.slice(types.indexOf('hall.stopping'))).toEqual(['hall.stopping', 'raider.signal', 'raider.done']);
    expect(tap.all.find((e) => e.type === 'raider.done')).toMatchObject({ id: a.id, status: 'interrupted' });
    expect(fs.existsSync(path.join(root, '.raider-hall.socket'))).toBe(false);
    expect(fs.existsSync(path.join(root, '.raider-hall.pid'))).toBe(false);
    const queue = JSON.parse(fs.readFileSync(path.join(root, '.raider-hall/state/1bjorn.queue.json'), 'utf8')) as Json[];
    expect(queue.map((m) => m.mission)).toEqual([`until ${flag}`]);

    // The next hall runs what was left waiting before any new mission.
    hall = await startTestHall({ root });
    const tap2 = await hall.events('raider.');
    const c = await hall.request({ cmd: 'spawn', name: '1bjorn', mission: 'answer third' });
    expect(c).toMatchObject({ queued: 1 });
    fs.writeFileSync(flag, '');
    const done = await tap2.waitFor((e) => e.type === 'raider.done' && e.response === 'third');
    expect(tap2.all.filter((e) => e.type === 'raider.done').map((e) => e.response)).toEqual([`saw ${flag}`, 'third']);
    expect(done.session).toBeDefined();
  });

  it('SIGKILLs raiders that ignore SIGTERM after 5 s and still reports them', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\ncancel_grace: 0\n' });
    const tap = await hall.events('raider.done');
    const a = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'deaf 60' });
    await runStarted(a.events_path);
    const t0 = Date.now();
    await hall.stop();
    hall = undefined;
    const ms = Date.now() - t0;
    expect(ms).toBeGreaterThanOrEqual(4900);
    expect(ms).toBeLessThan(10_000);
    expect(tap.all).toEqual([expect.objectContaining({ id: a.id, status: 'failed', signaled: 1 })]);
    expect(gone(a.pid)).toBe(true);
  });

  it('refuses a second hall on a live root', async () => {
    hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    await expect(startTestHall({ root: hall.root })).rejects.toThrow(`Hall already running with PID ${process.pid}`);
  });
});
