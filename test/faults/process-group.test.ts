/**
 * What a raider leaves in its process group dies with it, also a child that ignores SIGINT and SIGTERM: after a cancel
 * escalation, after a kill, and when the raider exits on its own. (A raider
 * deaf to both signals is test/integration/cancel-shutdown.test.ts.)
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startTestHall, type Json, type TestHall } from '../support/test-hall.js';
import { ODD_RAIDER } from './odd-raider-path.js';
import { processAlive } from '../../src/adapters/os/process-alive.js';

let hall: TestHall | undefined;
const strays: number[] = [];
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone, as it should be */
    }
  }
});

/** The pid the raider announced as `child PID` in its events file. */
async function childOf(reply: Json): Promise<number> {
  const pid = await eventually(
    () => {
      const m = /child (\d+)/.exec(fs.readFileSync(reply.events_path as string, 'utf8'));
      expect(m).not.toBeNull();
      return Number(m![1]);
    },
    10_000,
    10,
  );
  strays.push(pid);
  return pid;
}

/** Signal dispositions of a process: the mask of ignored signals, from /proc. */
function ignoresIntAndTerm(pid: number): boolean {
  const m = /^SigIgn:\s+([0-9a-f]+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  const mask = BigInt(`0x${m![1]}`);
  return (mask & (1n << 1n)) !== 0n && (mask & (1n << 14n)) !== 0n;
}

describe('a child that ignores SIGINT and SIGTERM (cancel_grace 0.2)', () => {
  const config = 'raiders: { odd: {} }\ncancel_grace: 0.2\n';

  it('is gone after a cancel escalates to SIGKILL of the group', async () => {
    hall = await startTestHall({ config, env: { RAIDER_HALL_RAIDER_BIN: ODD_RAIDER } });
    const tap = await hall.events('raider.done');
    const reply = await hall.request({ cmd: 'spawn', name: 'odd', mission: 'deaf-orphan' });
    const child = await childOf(reply);
    expect(processAlive(child)).toBe(true);
    await eventually(() => expect(ignoresIntAndTerm(child)).toBe(true), 5000, 10);
    const t0 = Date.now();
    expect(await hall.request({ cmd: 'cancel', id: reply.id })).toEqual({ cancelled: 1, id: reply.id });
    const done = await tap.waitFor((e) => e.id === reply.id);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(390);
    expect(done).toMatchObject({ status: 'failed', signaled: 1, cancel_requested: true });
    await eventually(() => expect(processAlive(child)).toBe(false), 3000);
    tap.close();
  });

  it('is gone after a kill escalates to SIGKILL of the group', async () => {
    hall = await startTestHall({ config, env: { RAIDER_HALL_RAIDER_BIN: ODD_RAIDER } });
    const tap = await hall.events('raider.done');
    const reply = await hall.request({ cmd: 'spawn', name: 'odd', mission: 'deaf-orphan' });
    const child = await childOf(reply);
    expect(await hall.request({ cmd: 'kill', id: reply.id })).toEqual({ killed: 1, id: reply.id });
    const done = await tap.waitFor((e) => e.id === reply.id);
    expect(done).toMatchObject({ status: 'failed', signaled: 1 });
    await eventually(() => expect(processAlive(child)).toBe(false), 3000);
    tap.close();
  });

  it('is gone once a raider that left it behind exits on its own', async () => {
    hall = await startTestHall({ config, env: { RAIDER_HALL_RAIDER_BIN: ODD_RAIDER } });
    const tap = await hall.events('raider.done');
    const reply = await hall.request({ cmd: 'spawn', name: 'odd', mission: 'orphan' });
    const done = await tap.waitFor((e) => e.id === reply.id);
    expect(done.status).toBe('completed');
    const child = Number(/child (\d+)/.exec(String(done.response))![1]);
    strays.push(child);
    await eventually(() => expect(processAlive(child)).toBe(false), 3000);
    tap.close();
  });

  it('is gone when the hall stops with the run still going', async () => {
    hall = await startTestHall({ config, env: { RAIDER_HALL_RAIDER_BIN: ODD_RAIDER } });
    const reply = await hall.request({ cmd: 'spawn', name: 'odd', mission: 'deaf-orphan' });
    const child = await childOf(reply);
    const raider = reply.pid as number;
    await hall.stop();
    hall = undefined;
    expect(processAlive(raider)).toBe(false);
    await eventually(() => expect(processAlive(child)).toBe(false), 3000);
  }, 20_000);
});
