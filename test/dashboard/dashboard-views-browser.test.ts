/**
 * The dashboard's views beyond the runs list in a real browser (Chromium) on
 * a real hall with real raider processes: the run timeline with a cancel's
 * escalation, sessions and a journal, the live tree, the charts, and a bus
 * of 500 events a second that must not freeze the page.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually, runStarted, type Json } from '../support/hall-client.js';
import type { TestHall } from '../support/test-hall.js';
import { useBrowserBoard } from './browser-board.js';
import { skipBrowserTests } from './browser.js';
import type { Board } from './dashboard-support.js';
import { startScriptedHall } from './scripted-hall.js';

if (skipBrowserTests !== null) console.warn(`dashboard view browser tests skipped: ${skipBrowserTests}`);

const CONFIG = 'cancel_grace: 0.3\nraiders: { ivar: {} }\ndashboard: { listen: "127.0.0.1:0" }\n';

describe.skipIf(skipBrowserTests !== null)('the dashboard views in Chromium', { timeout: 60_000 }, () => {
  const browserBoard = useBrowserBoard(CONFIG);
  const { problems, foreign, failedLoads } = browserBoard;
  let hall: TestHall;
  let board: Board;
  beforeAll(() => {
    ({ hall, board } = browserBoard);
  });

  /** A logged-in page, then at `hash` when one is given. */
  async function loggedIn(hash = '', target: Board = board): Promise<Page> {
    const page = await browserBoard.loggedIn(target);
    if (hash !== '') await page.goto(`${target.url}${hash}`);
    return page;
  }

  it('shows a cancel step by step on the run page: SIGINT, SIGTERM a grace later, SIGKILL, and the end', async () => {
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'deaf 30' });
    await runStarted(run.events_path);
    const page = await loggedIn(`#/runs/${run.id}`);
    await page.getByRole('button', { name: `Cancel ${run.id}` }).click();
    const timeline = page.getByRole('region', { name: 'Timeline' });
    await timeline.getByText(/ended: failed/).waitFor();
    const steps = await timeline.getByRole('listitem').allTextContents();
    const signals = steps.filter((s) => /SIG(INT|TERM|KILL) sent/.test(s));
    expect(signals.map((s) => /SIG\w+/.exec(s)?.[0])).toEqual(['SIGINT', 'SIGTERM', 'SIGKILL']);
    expect(signals[1]).toMatch(/\(\+0\.[3-9]\d s\)|\(\+\d+\.\d\d s\)/);
    expect(steps.at(-1)).toMatch(/killed by signal 9.*escalated to SIGKILL/);
  });

  it('lists bindings with their sessions, and shows a journal as text: messages, tool calls, permission decisions', async () => {
    const scripted = await startScriptedHall();
    try {
      const events = await scripted.hall.events('raider.done');
      let session: string;
      try {
        const run = await scripted.hall.request({
          cmd: 'spawn',
          name: '1bjorn',
          mission: 'look at <img src=x onerror="document.title=1">',
        });
        session = (await events.waitFor((e) => e.id === run.id)).session;
      } finally {
        events.close();
      }
      const page = await loggedIn('', scripted.board);
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Sessions' }).click();
      const bindings = page.getByRole('table', { name: 'Bindings' });
      const row = bindings.getByRole('row').filter({ hasText: 'slot:1bjorn' });
      await row.getByRole('link', { name: session }).click();
      const journal = page.getByRole('region', { name: 'Journal' });
      await journal.getByText('user: look at <img src=x onerror="document.title=1">').waitFor();
      await journal.getByText(/→ list_dir/).waitFor();
      await journal.getByText(/permission refused: bash/).waitFor();
      await journal.getByText(/assistant: I looked: look at <img/).waitFor();
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.title()).toBe('Raider Hall');
    } finally {
      await scripted.hall.stop();
    }
  });

  it('draws the live tree: a slot with its running run and its waiting missions in order, live as they change', async () => {
    const page = await loggedIn('#/tree');
    const tree = page.getByRole('region', { name: 'Live tree' });
    await tree
      .getByText(/Nothing runs or waits|slot /)
      .first()
      .waitFor();
    const running = await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'wait 30' });
    await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'answer <b>next</b>' });
    const slot = tree.getByRole('list', { name: 'slot 1ivar' });
    await slot.getByRole('link', { name: running.id }).waitFor();
    await slot.getByText(/waiting #1 .*: answer <b>next<\/b>/).waitFor();
    await tree.getByText('No cron jobs.').waitFor();
    // The run ends: the waiting mission starts, and the tree follows without a reload.
    await hall.request({ cmd: 'kill', id: running.id });
    await expect.poll(() => slot.getByRole('link', { name: running.id }).count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(() => slot.getByText(/waiting #1/).count(), { timeout: 15_000 }).toBe(0);
  });

  it('draws the charts with uPlot from the runs the hall keeps, with the durations as a table', async () => {
    const events = await hall.events('raider.done');
    try {
      const runs: Json[] = [];
      for (const mission of ['answer one', 'fail two', 'answer three'])
        runs.push(await hall.request({ cmd: 'spawn', name: 'bjorn', mission }));
      await eventually(() => expect(runs.every((r) => events.all.some((e) => e.id === r.id))).toBe(true));
    } finally {
      events.close();
    }
    const page = await loggedIn('#/charts');
    const charts = page.getByRole('region', { name: 'Charts' });
    for (const name of ['Runs per minute', 'Durations per raider', 'Queue depth'])
      await charts.getByRole('figure', { name }).locator('canvas').first().waitFor();
    const bjorn = charts.getByRole('table', { name: 'Durations' }).getByRole('row').filter({ hasText: 'bjorn' });
    expect(Number(await bjorn.getByRole('cell').nth(1).textContent())).toBeGreaterThanOrEqual(3);
    // uPlot's legend names the outcomes that occurred.
    await charts.getByRole('figure', { name: 'Runs per minute' }).getByText('failed').first().waitFor();
  });

  it('shows the view its address names when the address changes while the page starts', async () => {
    const page = await browserBoard.newPage();
    // The page has drawn itself (its modules ran) but its effects wait for a frame: the address changes then.
    await page.addInitScript(`addEventListener('DOMContentLoaded', () => {
      if (location.hash === '') location.hash = '#/charts';
    })`);
    await page.goto(`${board.url}?token=${board.token}`);
    await page.getByRole('region', { name: 'Charts' }).waitFor();
    expect(await page.getByRole('table', { name: 'Runs' }).count()).toBe(0);
  });

  it('stays responsive while the bus carries 500 events a second, and shows a run that ends during them', async () => {
    const page = await loggedIn();
    await page.getByRole('table', { name: 'Runs' }).waitFor();
    // The longest time between two animation frames while the burst lasts.
    // (A string: the tests are compiled without the DOM's types.)
    await page.evaluate(`(() => {
      window.frameGaps = [];
      window.frameWatch = true;
      let last = performance.now();
      const tick = (t) => {
        window.frameGaps.push(t - last);
        last = t;
        if (window.frameWatch) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    })()`);
    const seconds = 3;
    let sent = 0;
    const done = new Promise<void>((resolve) => {
      const started = Date.now();
      const timer = setInterval(() => {
        // 500 a second, in steps of 10 ms.
        const due = Math.min(500 * seconds, Math.floor(((Date.now() - started) / 1000) * 500));
        for (; sent < due; sent++)
          hall.hall.bus.publish({ type: 'raider.queued', slot: 'load', queue_depth: sent, mission_id: `m-load-${sent}` });
        if (sent >= 500 * seconds) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer during the burst' });
    await done;
    const gaps = await page.evaluate<number[]>('window.frameWatch = false, window.frameGaps');
    const row = page
      .getByRole('table', { name: 'Runs' })
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: run.id }) });
    await row.getByRole('cell', { name: 'completed', exact: true }).waitFor();
    // Frames kept coming (a frozen page has none): many, most of them at once, and never a
    // long wait between two (the bound leaves room for a machine that other work loads).
    expect(gaps.length).toBeGreaterThan(30);
    expect([...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)]).toBeLessThan(100);
    expect(Math.max(...gaps)).toBeLessThan(1500);
    const freeze = page.getByRole('button', { name: 'Freeze' });
    await freeze.click();
    expect(await freeze.getAttribute('aria-pressed')).toBe('true');
  });

  it('ran without script errors, CSP violations, failed loads or requests outside its origin', () => {
    expect(problems).toEqual([]);
    expect(failedLoads).toEqual([]);
    expect(foreign).toEqual([]);
  });
});
