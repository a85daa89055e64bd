/**
 * Outcome texts: no empty reason after `STATUS:`; a cancel that had to be
 * escalated to SIGKILL keeps its wire status (failed) but the slot log line,
 * `raider.done` (field hall_stop) and the CLI say that the hall cancelled it
 * and escalated (issue 14, item 17).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { doneOf, hall, hallLive, raiderStarted, removeRoots, request, socketOf, hallForFile } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const SPAWNED_ID = /^Spawned raider (\S+) \(PID \d+\)/m;

const file = hallForFile('raiders:\n  bjorn: {}\ncancel_grace: 0.3\n');

describe.concurrent('outcome texts', () => {
  it('a cancelled run has a reason after the colon in its slot log line', async () => {
    const run = await request(socketOf(file.root), { cmd: 'spawn', name: 'bjorn', mission: 'wait 600' });
    await raiderStarted(file.root, run.id);
    await request(socketOf(file.root), { cmd: 'cancel', id: run.id });
    expect(await doneOf(file.tap, run.id)).toMatchObject({ status: 'cancelled' });
    const logs = await hall(['logs', run.id], file.root);
    expect(logs.stdout).toContain(`[hall] raider ${run.id} cancelled: cancelled on request\n`);
  });

  it('a cancel escalated to SIGKILL says so in raider.done, the slot log and attach', async () => {
    const live = hallLive(['spawn', '--attach', 'bjorn', 'deaf', '600'], file.root);
    await live.printed('· run started (fake)\n');
    const id = SPAWNED_ID.exec(live.stderr())?.[1] ?? '';
    await raiderStarted(file.root, id);
    await request(socketOf(file.root), { cmd: 'cancel', id });
    const hallStop = 'cancelled by the hall, escalated to SIGKILL (SIGINT, SIGTERM, SIGKILL)';
    const error = `raider ${id} ended without a result (killed by signal 9)`;
    // The wire status and error stay; hall_stop says what the hall did.
    expect(await doneOf(file.tap, id)).toMatchObject({ status: 'failed', signaled: 1, error, cancel_requested: true, hall_stop: hallStop });
    const attached = await live.done;
    expect(attached.code).toBe(1);
    expect(attached.stderr).toContain(`run ${id} ended: failed: ${hallStop}: ${error}\n`);
    const logs = await hall(['logs', id], file.root);
    expect(logs.stdout).toContain(`[hall] raider ${id} failed: ${hallStop}: ${error}\n`);
  });
});
