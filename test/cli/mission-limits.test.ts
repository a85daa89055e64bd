/**
 * A mission the hall cannot hand to a raider is refused when it is
 * submitted, never accepted and lost later: over 100,000 bytes (a raider gets
 * it as one argument, and Linux refuses one over 128 KiB), or empty / blank
 * (issue 14, items 7 and 19).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { doneOf, hall, raiderStarted, removeRoots, request, socketOf, spawned, hallForFile } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const file = hallForFile('raiders:\n  bjorn: {}\ncancel_grace: 0.3\n');

describe.sequential('mission size', () => {
  it('a mission of 100,000 bytes runs', async () => {
    const text = 'x'.repeat(100_000 - 'answer '.length);
    const r = await hall(['spawn', 'bjorn', 'answer', text], file.root);
    expect(r.code, r.stderr).toBe(0);
    const run = spawned(r.stdout);
    expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'completed', response: text });
  });

  it('a longer one is refused at submission, also for a busy numbered slot whose queue would hold it', async () => {
    const busy = await request(socketOf(file.root), { cmd: 'spawn', name: '1bjorn', mission: 'wait 600' });
    await raiderStarted(file.root, String(busy.id));
    const long = 'x'.repeat(110_000);
    const [plain, numbered] = await Promise.all([
      hall(['spawn', 'bjorn', 'answer', long], file.root),
      hall(['spawn', '1bjorn', 'answer', long], file.root),
    ]);
    for (const r of [plain, numbered]) {
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('the mission is 110007 bytes; the hall accepts at most 100000');
    }
    const status = await request(socketOf(file.root), { cmd: 'status' });
    expect(status).toMatchObject({ running: 1 });
    // Nothing waits: the numbered slot's queue did not take it.
    expect(status.queues).toEqual({});
    await request(socketOf(file.root), { cmd: 'cancel', id: busy.id });
    await doneOf(file.tap, String(busy.id));
  });
});

describe.concurrent('empty missions', () => {
  it('an empty or blank mission is refused, on the socket and from the CLI', async () => {
    expect(await request(socketOf(file.root), { cmd: 'spawn', name: 'bjorn', mission: '' })).toEqual({
      error: 'spawn requires a mission: it is empty',
    });
    expect(await request(socketOf(file.root), { cmd: 'spawn', name: 'bjorn', mission: ' \n\t' })).toEqual({
      error: 'spawn requires a mission: it is empty',
    });
    expect(await request(socketOf(file.root), { cmd: 'spawn', name: 'bjorn' })).toEqual({ error: 'spawn requires a mission: it is empty' });
    const r = await hall(['spawn', 'bjorn', '   '], file.root);
    expect(r).toMatchObject({ code: 1, stdout: '', stderr: 'Hall error: spawn requires a mission: it is empty\n' });
  });
});
