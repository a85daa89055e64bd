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

if (skipBrowserTests !== null) console.warn(`dashboard browser tests skipped: ${skipBrowserTests}`);

const CONFIG = 'raiders:\n  bjorn: {}\n  ivar: {}\ndashboard: { listen: "127.0.0.1:0" }\n';

describe.skipIf(skipBrowserTests !== null)('the dashboard for a person', { timeout: 60_000 }, () => {
  const browserBoard = useBrowserBoard(CONFIG);
  const { problems, loggedIn } = browserBoard;
  let hall: TestHall;
  beforeAll(() => {
    ({ hall } = browserBoard);
  });

  async function runToEnd(name: string, mission: string): Promise<Json> {
    const events = await hall.events('raider.done');
    try {
      const run = await hall.request({ cmd: 'spawn', name, mission });
      return await events.waitFor((e) => e.id === run.id);
    } finally {
      events.close();
    }
  }

  it("shows a run that failed without a result with its exit code and the raider's stderr in Output", async () => {
    const done = await runToEnd('bjorn', 'stderr-fail no engine configured');
    expect(done.exit_code).toBe(3);
    const page = await loggedIn();
    await page.getByRole('link', { name: done.id }).click();
    const output = page.getByRole('region', { name: 'Output' });
    await output.getByText('no engine configured').waitFor();
    await page.getByText(done.error, { exact: true }).first().waitFor();
    expect(await page.getByText('exit code 0').count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
