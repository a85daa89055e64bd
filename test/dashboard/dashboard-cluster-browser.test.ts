/**
 * The dashboard of a hall in a shared cluster, in Chromium: two real hall
 * processes (`cluster_mode: shared`) on one embedded PostgreSQL. Hall B
 * starts alone and takes a mission that runs until the test ends it; then
 * hall A starts with a dashboard, whose page lists both halls and shows
 * B's run as B's, in the Runs table, in the API and in the live tree.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePostgresServer } from '../support/postgres-server.js';
import { eventually, request, spawnHallProcess, tempRoot, type Json } from '../support/hall-client.js';
import { launchBrowser, skipBrowserTests } from './browser.js';
import { apiGet, boardOf } from './dashboard-support.js';

if (skipBrowserTests !== null) console.warn(`dashboard cluster browser tests skipped: ${skipBrowserTests}`);

describe.skipIf(skipBrowserTests !== null)('the dashboard of a shared cluster in Chromium', { timeout: 30_000 }, () => {
  const server = usePostgresServer();
  const children: ChildProcess[] = [];
  // Launched while the halls start: the test awaits it when it opens the page.
  let browser: Promise<Browser> | undefined;

  beforeAll(() => {
    browser = launchBrowser();
  });
  afterAll(async () => {
    await (await browser?.catch(() => undefined))?.close();
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
  });

  async function startHall(url: string, id: string, extra = ''): Promise<{ root: string; socket: string }> {
    const root = tempRoot(`cluster-${id}-`);
    fs.writeFileSync(
      path.join(root, '.raider-hall.yml'),
      `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: team-a\ncluster_mode: shared\nhall_id: ${id}\n${extra}`,
    );
    children.push(await spawnHallProcess(root));
    return { root, socket: path.join(root, '.raider-hall.socket') };
  }

  it("lists every hall of the cluster and shows a run of hall B as B's on hall A's page", async () => {
    const url = await server.freshDatabase();
    const release = path.join(tempRoot(), 'release');
    // B alone in the cluster: the mission can only run there.
    const b = await startHall(url, 'hall-b');
    const queued = await request(b.socket, { cmd: 'spawn', name: 'bjorn', mission: `until ${release}` });
    expect(queued).toMatchObject({ queued: 1 });
    const runOfB = await eventually(async () => {
      const ps = await request(b.socket, { cmd: 'ps' });
      const run = (ps.raiders as Json[] | undefined)?.find((r) => r.hall === 'hall-b' && r.pid);
      if (!run) throw new Error(`B runs nothing yet: ${JSON.stringify(ps)}`);
      return String(run.id);
    }, 15_000);

    const a = await startHall(url, 'hall-a', 'dashboard: { listen: "127.0.0.1:0" }\n');
    const board = await boardOf(a.root);

    // The API: both halls with their leases and runs; B's run naming B.
    const cluster = await apiGet(board, '/api/cluster');
    expect(cluster).toMatchObject({ status: 200, shared: true, hall: 'hall-a' });
    const halls = cluster.halls as Json[];
    expect(halls.map((h) => h.id)).toEqual(['hall-a', 'hall-b']);
    expect(halls.find((h) => h.id === 'hall-b')).toMatchObject({ running: 1, pid: expect.any(Number), host: expect.any(String) });
    // Lease age (since the last renewal) and time left add up to lease_seconds (15 s by default).
    for (const hall of halls) {
      expect(hall.lease_left).toBeGreaterThan(0);
      expect(hall.lease_age).toBeGreaterThanOrEqual(0);
      expect(hall.lease_age + hall.lease_left).toBeCloseTo(15, 0);
    }
    const runs = await apiGet(board, '/api/runs');
    expect((runs.runs as Json[]).find((r) => r.id === runOfB)).toMatchObject({ hall: 'hall-b', status: 'running' });

    // The page of hall A.
    if (!browser) throw new Error('no browser');
    const page = await (await (await browser).newContext()).newPage();
    await page.goto(`${board.url}?token=${board.token}`);
    const hallsTable = page.getByRole('table', { name: 'Halls' });
    await hallsTable.getByRole('row').filter({ hasText: 'hall-a (this hall)' }).waitFor();
    const rowB = hallsTable.getByRole('row').filter({ hasText: 'hall-b' });
    await expect.poll(async () => (await rowB.getByRole('cell').allTextContents()).at(-1)).toBe('1');
    expect(await hallsTable.getByRole('columnheader').allTextContents()).toEqual(['Hall', 'Host', 'Lease age', 'Running']);
    expect(await rowB.getByRole('cell').nth(2).textContent()).toMatch(/^renewed \d+\.\d s ago$/);

    const runsTable = page.getByRole('table', { name: 'Runs' });
    expect(await runsTable.getByRole('columnheader').allTextContents()).toContain('Hall');
    const runRow = runsTable.getByRole('row').filter({ has: page.getByRole('link', { name: runOfB, exact: true }) });
    await expect.poll(() => runRow.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['hall-b', 'running']));

    // The live tree: the run under its slot, on hall B.
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Tree' }).click();
    const slot = page.getByRole('region', { name: 'Live tree' }).getByRole('list', { name: 'slot bjorn' });
    await expect.poll(() => slot.textContent()).toMatch(new RegExp(`${runOfB.replace('.', '\\.')}\\s*\\(on hall-b, pid \\d+`));
    await page.context().close();
    fs.writeFileSync(release, '');
  });
});
