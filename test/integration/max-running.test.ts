// max_running on a real hall, on files and on PostgreSQL: a mission over the
// limit is answered `queued`, waits in its slot's queue (queue and status list
// it, ps does not), survives a restart, and starts when a run ends.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hallPaths, slotLogPath } from '../../src/ports/hall-paths.js';
import { BACKENDS, useHallBackend } from '../support/hall-backends.js';
import { eventually, startTestHall, tempRoot, type TestHall } from '../support/test-hall.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

describe.each(BACKENDS)('max_running on %s', (backendName) => {
  const backend = useHallBackend(backendName);

  it('runs at most N raiders; the next waits in order, listed by queue and status, and starts when a run ends', async () => {
    const root = tempRoot();
    const release = path.join(root, 'release');
    const env = await backend.env();
    const config = 'raiders: { bjorn: {} }\nmax_running: 1\n';
    hall = await startTestHall({ root, config, env });
    const first = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${release}` });
    expect(first.pid).toEqual(expect.any(Number));
    const second = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer two' });
    expect(second).toEqual({ queued: 1, slot: 'bjorn', queue_depth: 1, position: 1, mission_id: expect.any(String) });
    expect((await hall.request({ cmd: 'ps' })).raiders.map((r: { id: string }) => r.id)).toEqual([first.id]);
    const status = await hall.request({ cmd: 'status' });
    expect(status).toMatchObject({
      running: 1,
      queues: { bjorn: 1 },
      waiting: [{ mission_id: second.mission_id, slot: 'bjorn', position: 1 }],
    });
    const queue = await hall.request({ cmd: 'queue' });
    expect(queue.queues).toEqual([
      expect.objectContaining({ slot: 'bjorn', missions: [expect.objectContaining({ mission_id: second.mission_id })] }),
    ]);

    // It survives a restart (the stop ends the running raider: the waiting one starts then).
    await hall.stop();
    hall = await startTestHall({ root, config, env });
    const restarted = hall;
    // Not lost on the way: it runs (its result comes to the slot log), once, and then the hall is idle.
    const log = slotLogPath(hallPaths(root), 'bjorn');
    await eventually(() => expect(fs.readFileSync(log, 'utf8')).toMatch(/\[hall\] raider bjorn-\S+ completed: two$/m), 10_000);
    await eventually(async () => {
      const { running, starting, waiting } = await restarted.request({ cmd: 'status' });
      expect({ running, starting, waiting }).toEqual({ running: 0, starting: undefined, waiting: undefined });
    });
    expect(fs.readFileSync(log, 'utf8').match(/\[hall\] raider bjorn-\S+ completed: two$/gm)).toHaveLength(1);
    const tap = await hall.events('raider.');
    const again = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${release}` });
    expect(again).toMatchObject({ pid: expect.any(Number) });
    const third = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer three' });
    expect(third).toMatchObject({ queued: 1, queue_depth: 1 });
    fs.writeFileSync(release, '');
    const spawned = await tap.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === third.mission_id);
    expect(spawned).toMatchObject({ slot: 'bjorn' });
    const done = await tap.waitFor((e) => e.type === 'raider.done' && e.mission_id === third.mission_id);
    expect(done.response).toBe('three');
    tap.close();
  });
});
