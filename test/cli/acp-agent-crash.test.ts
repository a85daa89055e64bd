/**
 * An ACP run outlives a kill -9 of the hall: its bridge is a raider in a
 * session of its own, so the next hall adopts it and reports its end
 * (docs/agents.md, "The process model").
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { tapEvents, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { alive, eventually, hallRoot, removeRoots, request, socketOf, startHallProcess } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

describe('an ACP run and a crash of the hall', () => {
  it('goes on while no hall runs, is adopted by the next hall and reported completed; the agent ends with it', async () => {
    const root = hallRoot(
      `raiders:\n  scripted: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_PID_FILE: agent.pid } } }\n`,
    );
    const first = await startHallProcess(root);
    const release = path.join(root, 'release');
    const run = await request(socketOf(root), { cmd: 'spawn', name: 'scripted', mission: `until ${release}` });
    const pidFile = path.join(root, 'agent.pid');
    await eventually(() => expect(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : '').toMatch(/^\d+ \d+$/), 30_000, 20);
    const agentPid = Number(fs.readFileSync(pidFile, 'utf8').split(' ')[0]);

    first.child.kill('SIGKILL');
    await first.exited;
    expect(alive(run.pid)).toBe(true);
    expect(alive(agentPid)).toBe(true);

    const second = await startHallProcess(root);
    try {
      const tap = await tapEvents(socketOf(root), 'raider.done');
      const ps = await request(socketOf(root), { cmd: 'ps' });
      expect(ps.raiders.map((r: { id: string }) => r.id)).toContain(run.id);
      fs.writeFileSync(release, '');
      const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id, 60_000);
      expect(done).toMatchObject({ status: 'completed', response: `saw ${release}` });
      tap.close();
      await eventually(() => expect(alive(agentPid)).toBe(false), 10_000, 20);
    } finally {
      expect((await second.stop()).code).toBe(0);
    }
  });
});
