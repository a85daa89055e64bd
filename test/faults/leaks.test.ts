/**
 * Runs in a row leave nothing behind in the hall: no zombie children, no file
 * descriptors, no live runs. The raider is a /bin/sh script that prints its
 * result and exits (the quickest there is); the hall runs in this process, so
 * its descriptors and children are this process's.
 *
 * LEAK_RUNS=N changes the count (default 1,000; bench/leaks.ts does the same
 * with a hall of its own and prints the figures).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startTestHall, tempRoot, type Json, type TestHall } from '../support/test-hall.js';

const RUNS = Number(process.env.LEAK_RUNS ?? 1000);
const CONNECTIONS = 4;

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

function minimalRaider(): string {
  const file = path.join(tempRoot('leak-bin-'), 'min-raider.sh');
  const finished = '{"elapsed":0,"response":"ok","seq":1,"status":"completed","time":0,"type":"run.finished","version":1}';
  fs.writeFileSync(file, `#!/bin/sh\nprintf '%s\\n' '${finished}'\n`, { mode: 0o755 });
  return file;
}

function openFds(pid = process.pid): string[] {
  const dir = `/proc/${pid}/fd`;
  return fs.readdirSync(dir).flatMap((fd) => {
    try {
      return [`${fd} -> ${fs.readlinkSync(path.join(dir, fd))}`];
    } catch {
      return []; // the directory's own descriptor, closed by now
    }
  });
}

/** A process's children (this one's by default), with their state letter (Z: a zombie nobody reaped). */
function children(parent = process.pid): Array<{ pid: number; state: string; comm: string }> {
  const found: Array<{ pid: number; state: string; comm: string }> = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      if (Number(ppid) === parent) found.push({ pid: Number(name), state: state!, comm: stat.slice(stat.indexOf('(') + 1, close) });
    } catch {
      /* gone */
    }
  }
  return found;
}

/** One connection that sends a spawn, waits for its raider.done, and goes on. */
async function worker(socketPath: string, count: number, doneOf: (id: string) => Promise<Json>): Promise<string[]> {
  const socket = net.connect(socketPath);
  await new Promise((r) => socket.once('connect', r));
  socket.setEncoding('utf8');
  let buffer = '';
  const replies: Array<(reply: Json) => void> = [];
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const reply = JSON.parse(buffer.slice(0, nl)) as Json;
      buffer = buffer.slice(nl + 1);
      replies.shift()!(reply);
    }
  });
  const statuses: string[] = [];
  for (let i = 0; i < count; i++) {
    const reply = await new Promise<Json>((resolve) => {
      replies.push(resolve);
      socket.write(`${JSON.stringify({ type: 'command', payload: { cmd: 'spawn', name: 'leak', mission: `run ${i}` } })}\n`);
    });
    if (typeof reply.id !== 'string') throw new Error(`spawn answered ${JSON.stringify(reply)}`);
    const done = await doneOf(reply.id);
    statuses.push(String(done.status));
  }
  socket.destroy();
  return statuses;
}

describe(`${RUNS} runs in a row`, () => {
  it('leave no zombie, no file descriptor and no live run in the hall', async () => {
    hall = await startTestHall({ env: { RAIDER_HALL_RAIDER_BIN: minimalRaider() } });
    const h = hall;
    // Whatever the hall opens once (the WAL, the listening socket) is open by now.
    const tap = await h.events('raider.done');
    const warm = await h.request({ cmd: 'spawn', name: 'leak', mission: 'warm-up' });
    await tap.waitFor((e) => e.id === warm.id);
    await new Promise((r) => setTimeout(r, 300));
    const fdsBefore = openFds();
    const childrenBefore = children();
    // The raiders are the hall's own children (it starts them itself): no fork server.
    expect(childrenBefore.filter((c) => fs.readFileSync(`/proc/${c.pid}/cmdline`, 'utf8').includes('raider-spawner.cjs'))).toEqual([]);

    // A raider.done can come before its spawn reply has been read: it is kept until asked for.
    const waiters = new Map<string, (e: Json) => void>();
    const early = new Map<string, Json>();
    h.hall.bus.subscribe({
      filter: 'raider.done',
      receive: (event) => {
        if (event.type !== 'raider.done') return;
        const id = event.id;
        const resolve = waiters.get(id);
        if (!resolve) return void early.set(id, event);
        waiters.delete(id);
        resolve(event);
      },
    });
    const doneOf = (id: string): Promise<Json> => {
      const seen = early.get(id);
      early.delete(id);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => waiters.set(id, resolve));
    };

    const t0 = Date.now();
    const share = Math.ceil(RUNS / CONNECTIONS);
    const statuses = (
      await Promise.all(Array.from({ length: CONNECTIONS }, (_, w) => worker(h.socket, Math.min(share, RUNS - w * share), doneOf)))
    ).flat();
    const elapsed = Date.now() - t0;
    expect(statuses).toHaveLength(RUNS);
    expect(statuses.filter((s) => s !== 'completed')).toEqual([]);

    // The last raider.done is out; the exit handlers reap what is left, and stream closes follow.
    // A leak never settles, so these still fail on one, after the wait.
    await eventually(() => {
      expect(children().filter((c) => c.state === 'Z')).toEqual([]);
      expect(
        children()
          .map((c) => c.pid)
          .sort(),
      ).toEqual(childrenBefore.map((c) => c.pid).sort());
      expect(
        openFds().filter((fd) => !fdsBefore.includes(fd)),
        'descriptors opened during the runs and still open',
      ).toEqual([]);
    });
    const fdsAfter = openFds();
    expect(fdsAfter.length).toBeLessThanOrEqual(fdsBefore.length);
    expect(await h.request({ cmd: 'ps' })).toEqual({ raiders: [] });
    // Each run's stderr spool goes with its run.
    expect(fs.readdirSync(path.join(h.root, '.raider-hall/logs')).filter((f) => f.includes('.stderr'))).toEqual([]);
    expect(await h.request({ cmd: 'status' })).toMatchObject({ running: 0, runs: [] });
    tap.close();
    console.log(
      `${RUNS} runs over ${CONNECTIONS} connections in ${elapsed} ms; descriptors ${fdsBefore.length} before, ${fdsAfter.length} after; no zombies`,
    );
  }, 120_000);
});
