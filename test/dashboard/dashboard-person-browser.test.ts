/**
 * The dashboard for a person, in Chromium on a real hall with real (fake)
 * raider processes: a failed run's page says why with the raider's own
 * words, the Runs table shows missions, the Spawn form offers the
 * configured raiders and shows the hall's notice.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Json, TestHall } from '../support/test-hall.js';
import { useBrowserBoard } from './browser-board.js';
import { skipBrowserTests } from './browser.js';
import { runToEnd as runToEndOn } from './dashboard-support.js';

if (skipBrowserTests !== null) console.warn(`dashboard browser tests skipped: ${skipBrowserTests}`);

const CONFIG = 'raiders:\n  bjorn: {}\n  ivar: {}\ndashboard: { listen: "127.0.0.1:0" }\n';

describe.skipIf(skipBrowserTests !== null)('the dashboard for a person', { timeout: 60_000 }, () => {
  const browserBoard = useBrowserBoard(CONFIG);
  const { problems, loggedIn } = browserBoard;
  let hall: TestHall;
  beforeAll(() => {
    ({ hall } = browserBoard);
  });

  const runToEnd = (name: string, mission: string): Promise<Json> => runToEndOn(hall, name, mission);

  it("shows a run that failed without a result with its exit code and the raider's stderr in Output", async () => {
    const done = await runToEnd('bjorn', 'stderr-fail no engine configured');
    expect(done.exit_code).toBe(3);
    const page = await loggedIn();
    await page.getByRole('link', { name: done.id }).click();
    const output = page.getByRole('region', { name: 'Output' });
    // In the slot log: the conversation's mission names the words too.
    await output.locator('pre.log').getByText('no engine configured').waitFor();
    await page.getByText(done.error, { exact: true }).first().waitFor();
    expect(await page.getByText('exit code 0').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('shows each run its mission, one line shortened, the whole text its title: runs listed and runs the bus added', async () => {
    const long = `answer ${'a long mission that goes on '.repeat(8)}and ends here`;
    const before = await runToEnd('bjorn', long);
    const page = await loggedIn();
    const runs = page.getByRole('table', { name: 'Runs' });
    await runs.waitFor();
    expect(await runs.getByRole('columnheader').allTextContents()).toContain('Mission');
    const cellOf = (id: string) =>
      runs
        .getByRole('row')
        .filter({ has: page.getByRole('link', { name: id, exact: true }) })
        .locator('td.mission-cell');
    const listed = cellOf(before.id);
    expect(await listed.getAttribute('title')).toBe(long);
    const shown = await listed.textContent();
    expect(shown?.endsWith('…')).toBe(true);
    expect(long.startsWith(shown?.slice(0, -1) ?? 'none')).toBe(true);

    // A run the page learns of from the bus (raider.spawned carries no mission).
    const after = await runToEnd('ivar', 'answer short one');
    await expect.poll(() => cellOf(after.id).textContent()).toBe('answer short one');
    expect(await cellOf(after.id).getAttribute('title')).toBe('answer short one');
  });

  it("offers the configured raiders in the Spawn form and shows the hall's notice for a name without an entry", async () => {
    const page = await loggedIn();
    const form = page.getByRole('form', { name: 'Spawn' });
    const raider = form.getByLabel('Raider');
    const list = await raider.getAttribute('list');
    expect(await page.locator(`datalist#${list} option`).evaluateAll((options) => options.map((o) => o.getAttribute('value')))).toEqual([
      'bjorn',
      'ivar',
    ]);
    await raider.fill('bjron');
    await form.getByLabel('Mission').fill('answer typo');
    await form.getByRole('button', { name: 'Spawn' }).click();
    await form.getByRole('alert').getByText('bjron has no entry in .raider-hall.yml', { exact: false }).waitFor();
    await form
      .getByRole('status')
      .getByRole('link', { name: /^bjron-/ })
      .waitFor();
    expect(problems).toEqual([]);
  });
});
