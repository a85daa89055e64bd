/**
 * kill -9 of the hall while it writes a checkpoint of a long queue loses
 * nothing: the write-ahead log holds what the half-written file does not.
 * "While" is made true by watching the state directory and killing the hall
 * the moment the temp file of the queue's checkpoint appears; a kill that
 * came too late (the file already renamed) is tried again with more missions.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rawExchange, request, spawnHallProcess, tempRoot, type Json } from '../support/hall-client.js';

const SLOT = '1bjorn';
const ATTEMPTS = 5;

let hall: ChildProcess | undefined;
let occupant: number | undefined;
afterEach(() => {
  hall?.kill('SIGKILL');
  hall = undefined;
  try {
    if (occupant !== undefined) process.kill(-occupant, 'SIGKILL');
  } catch {
    // Already gone.
  }
  occupant = undefined;
});

function spawnFrames(from: number, n: number): string {
  let out = '';
  for (let i = from; i < from + n; i++)
    out += `${JSON.stringify({ type: 'command', payload: { cmd: 'spawn', name: SLOT, mission: `answer m${i}` } })}\n`;
  return out;
}

/** Resolves true when the hall was killed with a checkpoint temp file of the queue in place, false when none showed up in time. */
function killDuringCheckpoint(child: ChildProcess, stateDir: string, timeoutMs: number): { killed: Promise<boolean> } {
  const temp = `${SLOT}.queue.json.tmp-${child.pid}`;
  const killed = new Promise<boolean>((resolve) => {
    const watcher = fs.watch(stateDir, (_event, name) => {
      if (name !== temp || !fs.existsSync(path.join(stateDir, temp))) return;
      child.kill('SIGKILL');
      watcher.close();
      clearTimeout(timer);
      resolve(true);
    });
    const timer = setTimeout(() => {
      watcher.close();
      resolve(false);
    }, timeoutMs);
  });
  return { killed };
}

describe('a checkpoint cut short', () => {
  it('kill -9 while a long queue is being checkpointed: every accepted mission is there after the restart, in order', async () => {
    const root = tempRoot('checkpoint-crash-');
    fs.writeFileSync(path.join(root, '.raider-hall.yml'), 'raiders: { bjorn: {} }\n');
    const socket = path.join(root, '.raider-hall.socket');
    const stateDir = path.join(root, '.raider-hall', 'state');
    hall = await spawnHallProcess(root);
    const busy = await request(socket, { cmd: 'spawn', name: SLOT, mission: `until ${path.join(root, 'never')}` });
    occupant = busy.pid as number;

    const accepted: string[] = [];
    /** Missions whose reply the kill may have cut off: each may or may not be there. */
    const maybe = new Set<string>();
    let next = 0;
    let cutShort = 0;
    for (let attempt = 0; attempt < ATTEMPTS && cutShort === 0; attempt++) {
      if (attempt > 0) hall = await spawnHallProcess(root);
      const child = hall;
      // A long queue, so that writing its checkpoint takes a while.
      const replies = await rawExchange(socket, spawnFrames(next, 3000), 3000, 60_000);
      for (const reply of replies) {
        expect(reply).toMatchObject({ queued: 1, slot: SLOT });
        accepted.push(reply.mission_id as string);
      }
      next += 3000;
      const { killed } = killDuringCheckpoint(child, stateDir, 5000);
      // One more change makes the next checkpoint due; the kill may come before its reply.
      const last = await request(socket, { cmd: 'spawn', name: SLOT, mission: `answer m${next++}` }).catch(() => null);
      if (last?.mission_id !== undefined) accepted.push(last.mission_id as string);
      if (await killed) {
        if (fs.readdirSync(stateDir).some((f) => f.includes('.tmp-'))) cutShort++;
      } else child.kill('SIGKILL');
      await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
      if (last === null) maybe.add(`m${next - 1}`);
    }
    expect(cutShort).toBe(1);

    hall = await spawnHallProcess(root);
    const status = await request(socket, { cmd: 'status' });
    const file = JSON.parse(fs.readFileSync(path.join(stateDir, `${SLOT}.queue.json`), 'utf8')) as Json[];
    const restored = file.map((m) => m.id as string);
    const extra = file.filter((m) => !accepted.includes(m.id as string)).map((m) => String(m.mission).replace('answer ', ''));
    expect(extra.filter((label) => !maybe.has(label))).toEqual([]);
    expect(restored.filter((id) => accepted.includes(id))).toEqual(accepted);
    expect(status.queues[SLOT]).toBe(restored.length);
    // The temp file the kill left behind is gone: it would only take room a full disk needs.
    expect(fs.readdirSync(stateDir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  }, 180_000);
});
