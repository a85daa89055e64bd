/**
 * The dashboard in a real browser (Chromium) on a real hall with real raider
 * processes: login by token, the Runs table live, Cancel, the Spawn form and
 * its refusal, a mission made of HTML shown as text, read-only without
 * buttons, and no request leaving the hall's origin. One browser for the file.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually, rawExchange, runStarted } from '../support/hall-client.js';
import type { TestHall } from '../support/test-hall.js';
import { useBrowserBoard } from './browser-board.js';
import { skipBrowserTests } from './browser.js';
import { startBoardHall, type Board } from './dashboard-support.js';

if (skipBrowserTests !== null) console.warn(`dashboard browser tests skipped: ${skipBrowserTests}`);

// A browser on a loaded machine (CI shares its cores) needs more than the default 30 s now and then.
describe.skipIf(skipBrowserTests !== null)('the dashboard in Chromium', { timeout: 60_000 }, () => {
  const browserBoard = useBrowserBoard();
  const { problems, requested, foreign, failedLoads, loggedIn } = browserBoard;
  let hall: TestHall;
  let board: Board;
  beforeAll(() => {
    ({ hall, board } = browserBoard);
  });

  it('logs in by token, lands on a URL without it, and shows the Runs table', async () => {
    const page = await loggedIn();
    expect(page.url()).toBe(board.url);
    await page.getByRole('table', { name: 'Runs' }).waitFor();
    expect(await page.getByRole('form', { name: 'Spawn' }).count()).toBe(1);
    // One hall, no cluster: no Halls table and no Hall column.
    expect(await page.getByRole('table', { name: 'Halls' }).count()).toBe(0);
    expect(await page.getByRole('table', { name: 'Runs' }).getByRole('columnheader').allTextContents()).not.toContain('Hall');
  });

  it('shows a run spawned elsewhere live, running, and Cancel ends it as cancelled', async () => {
    const page = await loggedIn();
    const runs = page.getByRole('table', { name: 'Runs' });
    await runs.waitFor();
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'wait 30' });
    await runStarted(run.events_path);
    const row = runs.getByRole('row').filter({ has: page.getByRole('link', { name: run.id }) });
    await row.getByRole('cell', { name: 'running', exact: true }).waitFor();
    await row.getByRole('button', { name: /^Kill/ }).waitFor();
    await row.getByRole('button', { name: /^Cancel/ }).click();
    await row.getByRole('cell', { name: 'cancelled', exact: true }).waitFor();
    expect(await row.getByRole('button', { name: /^Cancel/ }).count()).toBe(0);
  });

  it('follows runs that start and end from the bus events, without asking the hall for the runs or the queue again', async () => {
    const page = await loggedIn();
    const runs = page.getByRole('table', { name: 'Runs' });
    await runs.waitFor();
    // What this page asks for from here on.
    const asked: string[] = [];
    page.on('request', (req) => {
      const { pathname } = new URL(req.url());
      if (pathname === '/api/runs' || pathname === '/api/queue') asked.push(pathname);
    });
    const started = await Promise.all(
      Array.from({ length: 12 }, (_, i) => hall.request({ cmd: 'spawn', name: 'ulf', mission: `answer burst ${i}` })),
    );
    for (const run of started) {
      const row = runs.getByRole('row').filter({ has: page.getByRole('link', { name: run.id, exact: true }) });
      await row.getByRole('cell', { name: 'completed', exact: true }).waitFor();
      expect(await row.getByRole('cell', { name: 'ulf', exact: true }).count()).toBe(1);
    }
    expect(asked).toEqual([]);
    // A Status filter needs what the events do not carry: the page asks the hall, and shows its answer.
    await page.getByLabel('Status filter').selectOption('completed');
    await expect.poll(() => asked).toContain('/api/runs');
    await runs.getByRole('link', { name: started[0]?.id, exact: true }).waitFor();
    expect(await runs.getByRole('cell', { name: 'running', exact: true }).count()).toBe(0);
  });

  it('in a burst stops streaming and asks for what came, then streams again; the table ends right without asking for the runs', async () => {
    const page = await loggedIn();
    const runs = page.getByRole('table', { name: 'Runs' });
    await runs.waitFor();
    // How this page gets the bus from here on: streams (EventSource) and polls.
    const feed: string[] = [];
    page.on('request', (req) => {
      const url = new URL(req.url());
      if (url.pathname === '/api/events') feed.push(url.searchParams.get('poll') === '1' ? 'poll' : 'stream');
      if (url.pathname === '/api/runs') feed.push('runs');
    });
    // Hundreds of events a second (pipelined on one connection, as a script would): the page polls instead of taking each event from a stream.
    // On a machine busy with other tests 300 starts may come slower than a burst's rate (100 events a second), and the
    // page rightly streams them: then another 300 come, at most three bursts in all.
    let replies: Awaited<ReturnType<typeof rawExchange>> = [];
    for (let burst = 0; burst < 3 && !feed.includes('poll'); burst++) {
      const spawns = Array.from({ length: 300 }, (_, i) =>
        JSON.stringify({ type: 'command', payload: { cmd: 'spawn', name: 'sven', mission: `answer polled ${burst}.${i}` } }),
      );
      replies = await rawExchange(hall.socket, `${spawns.join('\n')}\n`, spawns.length, 60_000);
      expect(replies.filter((r) => typeof r.pid === 'number')).toHaveLength(spawns.length);
      // Not polled within a few seconds of the burst's end: the burst was not one to the page.
      await eventually(() => expect(feed).toContain('poll'), 5_000).catch(() => undefined);
    }
    expect(feed).toContain('poll');
    // The newest run of the burst (the last spawned on the connection) shows; then every run shown ended.
    await runs.getByRole('link', { name: String(replies.at(-1)?.id), exact: true }).waitFor({ timeout: 20_000 });
    await expect.poll(() => runs.getByRole('cell', { name: 'running', exact: true }).count(), { timeout: 20_000 }).toBe(0);
    const shown = runs.getByRole('row').filter({ has: page.getByRole('cell', { name: 'sven', exact: true }) });
    expect(await shown.count()).toBeGreaterThan(0);
    expect(await shown.getByRole('cell', { name: 'completed', exact: true }).count()).toBe(await shown.count());
    // Calm again: back to a stream, which shows a run as it starts and ends.
    await expect.poll(() => feed.at(-1), { timeout: 20_000 }).toBe('stream');
    const calm = await hall.request({ cmd: 'spawn', name: 'sven', mission: 'answer calm again' });
    const row = runs.getByRole('row').filter({ has: page.getByRole('link', { name: calm.id, exact: true }) });
    await row.getByRole('cell', { name: 'completed', exact: true }).waitFor();
    expect(feed.filter((f) => f === 'stream')).toHaveLength(1);
    // Runs that newer ones pushed off the table and then ended were placed from what the page had: it never asked for the runs.
    expect(feed).not.toContain('runs');
  }, 120_000);

  it('holds live updates while Freeze is pressed, and shows them when it is released', async () => {
    const page = await loggedIn();
    const runs = page.getByRole('table', { name: 'Runs' });
    await runs.waitFor();
    const freeze = page.getByRole('button', { name: 'Freeze' });
    await freeze.click();
    expect(await freeze.getAttribute('aria-pressed')).toBe('true');
    const run = await hall.request({ cmd: 'spawn', name: 'ivar', mission: 'answer frozen' });
    // The page has the run's spawn and end in hand (two events or more held) but shows neither.
    await page
      .getByRole('status')
      .filter({ hasText: /Frozen: ([2-9]|\d{2,}) updates held/ })
      .waitFor();
    const row = runs.getByRole('row').filter({ has: page.getByRole('link', { name: run.id }) });
    expect(await row.count()).toBe(0);
    await freeze.click();
    await row.getByRole('cell', { name: 'completed', exact: true }).waitFor();
  });

  it('spawns from the Spawn form, and shows a refusal as an alert', async () => {
    const page = await loggedIn();
    const form = page.getByRole('form', { name: 'Spawn' });
    await form.getByLabel('Raider').fill('../x');
    await form.getByLabel('Mission').fill('answer nothing');
    await form.getByRole('button', { name: 'Spawn' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toMatch(/invalid raider name/);

    const events = await hall.events('raider.done');
    try {
      await form.getByLabel('Raider').fill('ivar');
      await form.getByLabel('Mission').fill('answer from the form');
      await form.getByRole('button', { name: 'Spawn' }).click();
      const done = await events.waitFor((e) => e.slot === 'ivar');
      const row = page
        .getByRole('table', { name: 'Runs' })
        .getByRole('row')
        .filter({ has: page.getByRole('link', { name: done.id }) });
      await row.getByRole('cell', { name: 'completed', exact: true }).waitFor();
    } finally {
      events.close();
    }
  });

  it('shows a mission and output made of HTML as text on the run page, with its Output region', async () => {
    const mission = 'answer <img src=x onerror="document.title=\'owned\'"><b id="bold">bold</b>';
    const events = await hall.events('raider.done');
    const page = await loggedIn();
    let id: string;
    try {
      const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission });
      id = run.id;
      await events.waitFor((e) => e.id === run.id);
    } finally {
      events.close();
    }
    await page.getByRole('link', { name: id }).click();
    const output = page.getByRole('region', { name: 'Output' });
    await output.getByText('<b id="bold">bold</b>', { exact: false }).first().waitFor();
    await page.getByText(mission, { exact: true }).waitFor();
    expect(await page.locator('#bold').count()).toBe(0);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.title()).toBe('Raider Hall');
    await page
      .getByRole('region', { name: 'Timeline' })
      .getByText(/ended: completed/)
      .waitFor();
  });

  it('shows no buttons when read-only', async () => {
    const ro = await startBoardHall('dashboard: { listen: "127.0.0.1:0", read_only: true }\n');
    try {
      await ro.hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'wait 30' });
      const page = await loggedIn(ro.board);
      const runs = page.getByRole('table', { name: 'Runs' });
      await runs.getByRole('cell', { name: 'running', exact: true }).waitFor();
      await page.getByText('Read-only dashboard.').waitFor();
      expect(await page.getByRole('form', { name: 'Spawn' }).count()).toBe(0);
      expect(await runs.getByRole('button').count()).toBe(0);
    } finally {
      await ro.hall.stop();
    }
  });

  it('made no request outside its origin, and ran without script errors or CSP violations', () => {
    expect(requested.length).toBeGreaterThan(10);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    expect(failedLoads).toEqual([]);
  });
});
