/**
 * Raider stdout of every bad kind (issue 9, fault tests): 100 MB of output,
 * 10 MB lines, invalid UTF-8, a 10 MB result. The hall reads the run's result
 * correctly, keeps answering while the raider writes, and stays up.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestHall, type Json, type TestHall } from '../support/test-hall.js';
import { ODD_RAIDER } from './odd-raider-path.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

async function oddHall(): Promise<TestHall> {
  hall = await startTestHall({ config: 'raiders: { odd: {} }\n', env: { RAIDER_HALL_RAIDER_BIN: ODD_RAIDER } });
  return hall;
}

/**
 * The first raider.done on a subscription of its own. Lines are split as
 * Buffers: a 10 MB event must not cost the test the square of its chunks.
 */
function nextDone(socketPath: string, timeoutMs: number): Promise<{ ready: Promise<void>; done: Promise<Json>; close(): void }> {
  const socket = net.connect(socketPath);
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => (resolveReady = r));
  const done = new Promise<Json>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => reject(new Error('no raider.done in time')), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      let nl = chunk.indexOf(0x0a);
      while (nl >= 0) {
        const line = Buffer.concat([...chunks, chunk.subarray(0, nl)]).toString('utf8');
        chunks.length = 0;
        chunk = chunk.subarray(nl + 1);
        nl = chunk.indexOf(0x0a);
        const event = JSON.parse(line) as Json;
        if (event.type === undefined) resolveReady();
        else if (event.type === 'raider.done') {
          clearTimeout(timer);
          resolve(event);
        }
      }
      if (chunk.length > 0) chunks.push(chunk);
    });
    socket.on('error', reject);
  });
  socket.write(
    `${JSON.stringify({ type: 'subscribe', payload: { filter: 'raider.done' } })}\n${JSON.stringify({ type: 'command', payload: { cmd: 'status' } })}\n`,
  );
  return Promise.resolve({ ready, done, close: () => socket.destroy() });
}

/** Spawns `mission`, sends `status` every 20 ms until its raider.done, and returns both. */
async function runWhileProbing(h: TestHall, mission: string, timeoutMs = 30_000): Promise<{ done: Json; probes: number[] }> {
  const sub = await nextDone(h.socket, timeoutMs);
  await sub.ready;
  const reply = await h.request({ cmd: 'spawn', name: 'odd', mission });
  expect(reply.id).toEqual(expect.any(String));
  const probes: number[] = [];
  let finished = false;
  const done = sub.done.finally(() => (finished = true));
  while (!finished) {
    const t0 = Date.now();
    const status = await h.request({ cmd: 'status' });
    expect(status.root).toBe(h.root);
    probes.push(Date.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
  sub.close();
  const event = await done;
  expect(event.id).toBe(reply.id);
  return { done: event, probes };
}

describe('raider output the hall must survive', () => {
  it('100 MB on stdout: the result is read, the hall answers all along and does not hold the output in memory', async () => {
    const h = await oddHall();
    global.gc?.();
    const heap0 = process.memoryUsage().heapUsed;
    const { done, probes } = await runWhileProbing(h, 'big 100');
    expect(done).toMatchObject({ status: 'completed', response: 'wrote 100 MB', exit_code: 0 });
    const eventsFile = path.join(h.root, '.raider-hall', 'logs', `${done.id}.events.jsonl`);
    expect(fs.statSync(eventsFile).size).toBeGreaterThan(100 * 1024 * 1024);
    expect(probes.length).toBeGreaterThan(0);
    // Generous: the point is that status is answered while the raider writes, not how fast.
    expect(Math.max(...probes)).toBeLessThan(2000);
    expect(process.memoryUsage().heapUsed - heap0).toBeLessThan(50 * 1024 * 1024);
    const log = fs.readFileSync(path.join(h.root, '.raider-hall', 'logs', 'odd.log'), 'utf8');
    expect(log).toContain(`[hall] raider ${done.id} completed: wrote 100 MB`);
    console.log(`100 MB run: ${probes.length} status probes, slowest ${Math.max(...probes)} ms`);
  }, 60_000);

  it('10 MB lines and invalid UTF-8 around the result: the last valid run.finished wins', async () => {
    const h = await oddHall();
    const { done } = await runWhileProbing(h, 'long-lines 10');
    expect(done).toMatchObject({ status: 'completed', response: 'ok after long lines' });
    expect(await h.request({ cmd: 'logs', id: done.id })).toEqual({
      log: expect.stringContaining(`[hall] raider ${done.id} completed: ok after long lines`),
    });
  });

  it('a 10 MB result reaches raider.done whole; the slot log keeps 300 characters of it', async () => {
    const h = await oddHall();
    const { done, probes } = await runWhileProbing(h, 'huge-result 10');
    expect(done.status).toBe('completed');
    // Reading the result costs its size once (it used to block the hall for seconds).
    expect(Math.max(...probes)).toBeLessThan(2000);
    expect(done.response).toHaveLength(10 * 1024 * 1024 - 2);
    expect(done.response.startsWith('üy')).toBe(true);
    expect(done.response.endsWith('y日')).toBe(true);
    const log = fs.readFileSync(path.join(h.root, '.raider-hall', 'logs', 'odd.log'), 'utf8');
    const result = log.split('\n').find((l) => l.startsWith(`[hall] raider ${done.id} completed:`))!;
    expect(result.length).toBeLessThan(400);
    expect(await h.request({ cmd: 'status' })).toMatchObject({ running: 0 });
  });

  it('invalid UTF-8 inside the result line: the result is still read, the bad byte replaced', async () => {
    const h = await oddHall();
    const { done } = await runWhileProbing(h, 'bad-utf8-result');
    expect(done).toMatchObject({ status: 'completed', response: 'caf\ufffd au lait' });
  });
});
