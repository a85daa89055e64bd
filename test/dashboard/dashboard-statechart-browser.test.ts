/**
 * The statechart of a live actor in Chromium, on a real hall with real (fake)
 * raider processes: a run's chart on its page follows a cancel through the
 * escalation states without a reload; a slot's and a binding queue's charts
 * open from the Tree page; nothing is fetched from outside the hall.
 */
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { rawExchange, runStarted } from '../support/hall-client.js';
import type { TestHall } from '../support/test-hall.js';
import { useBrowserBoard } from './browser-board.js';
import { skipBrowserTests } from './browser.js';

if (skipBrowserTests !== null) console.warn(`dashboard statechart browser tests skipped: ${skipBrowserTests}`);

const CONFIG = 'cancel_grace: 0.4\nraiders: { bjorn: {}, ivar: {} }\ndashboard: { listen: "127.0.0.1:0" }\n';

/**
 * Notes, in order, each state the page marks current in the chart `label` names (kept on `window`: a reload would
 * lose it). From each change's old value, not the attribute at the observer's call: the page marks every state of a
 * batch in order in one task (a run that leaves `reaping` for `done` within the stream's gap), so a state may be
 * marked and unmarked again before the observer hears of it. A change whose old value was not "true" marked it.
 */
async function recordMarks(page: Page, label: string): Promise<void> {
  await page.evaluate(`(() => {
    const marks = [];
    window.statechartMarks = marks;
    const box = document.querySelector(${JSON.stringify(`[aria-label="${label}"]`)});
    const note = (node) => {
      if (!node.classList.contains('sc-compound')) marks.push(node.getAttribute('data-state'));
    };
    for (const node of box.querySelectorAll('[aria-current="true"]')) note(node);
    new MutationObserver((changes) => {
      for (const change of changes) if (change.oldValue !== 'true') note(change.target);
    }).observe(box, { attributes: true, attributeFilter: ['aria-current'], attributeOldValue: true, subtree: true });
  })()`);
}

async function marks(page: Page): Promise<string[]> {
  return (await page.evaluate('window.statechartMarks')) as string[];
}

/** The states the chart marks current now. */
async function current(page: Page, label: string): Promise<string[]> {
  return page
    .getByRole('region', { name: label })
    .locator('[aria-current="true"]')
    .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('aria-label') ?? ''));
}

/** The row of a slot's list that says its run `id` ended (and no run whose id goes on: `ID.2`). */
function ended(id: string): RegExp {
  return new RegExp(`received xstate\\.done\\.actor\\.run:${id.replaceAll('.', '\\.')}(?![.\\d])`);
}

describe.skipIf(skipBrowserTests !== null)('statecharts in Chromium', { timeout: 60_000 }, () => {
  const browserBoard = useBrowserBoard(CONFIG);
  const { problems, foreign, requested } = browserBoard;
  let hall: TestHall;
  beforeAll(() => {
    ({ hall } = browserBoard);
  });

  /** A page on the chart of the plain slot `name` (made by a first mission, and kept), once its list shows that mission's end. */
  async function slotChart(name: string): Promise<{ page: Page; list: Locator }> {
    const first = await hall.request({ cmd: 'spawn', name, mission: 'answer first' });
    const page = await browserBoard.loggedIn();
    await page.goto(`${browserBoard.board.url}#/actors/${encodeURIComponent(`slot:${name}`)}`);
    const list = page.getByRole('list', { name: `Events of slot:${name}` });
    await list.getByText(ended(String(first.id))).waitFor();
    return { page, list };
  }

  it("marks a run's state on its page and follows a cancel through SIGINT, SIGTERM and SIGKILL to its end, with no reload", async () => {
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'deaf 30' });
    await runStarted(run.events_path);
    const page = await browserBoard.loggedIn();
    await page.goto(`${browserBoard.board.url}#/runs/${run.id}`);
    const label = `statechart of run:${run.id}`;
    const chart = page.getByRole('region', { name: label });
    await chart.locator('[data-state="alive.running"][aria-current="true"]').waitFor();
    expect(await current(page, label)).toEqual(['alive', 'alive.running']);
    // Every state carries its name.
    for (const state of ['queued', 'alive.cancelling', 'alive.terminating', 'alive.killing', 'reaping', 'done'])
      expect(await chart.locator(`[aria-label="${state}"]`).count()).toBe(1);
    await recordMarks(page, label);
    const loads: string[] = [];
    page.on('framenavigated', (frame) => loads.push(frame.url()));

    await page.getByRole('button', { name: `Cancel ${run.id}` }).click();
    await chart.locator('[data-state="done"][aria-current="true"]').waitFor({ timeout: 15_000 });
    const seen = await marks(page);
    expect(seen.filter((s) => s !== 'alive.running')).toEqual([
      'alive.cancelling',
      'alive.terminating',
      'alive.killing',
      'reaping',
      'done',
    ]);
    expect(loads).toEqual([]);
    await page.getByRole('status').filter({ hasText: 'The actor has ended' }).waitFor();

    // Below the chart: what the run received, in order, with times.
    const events = page.getByRole('list', { name: `Events of run:${run.id}` });
    const lines = await events.getByRole('listitem').allTextContents();
    const cancel = lines.findIndex((l) => /received run\.cancel/.test(l));
    const graces = lines.map((l, i) => (/received xstate\.after\.cancelGrace/.test(l) ? i : -1)).filter((i) => i >= 0);
    const exited = lines.findIndex((l) => /received proc\.exited/.test(l));
    expect(cancel).toBeGreaterThanOrEqual(0);
    expect(graces.length).toBe(2);
    expect(graces[0]).toBeGreaterThan(cancel);
    expect(exited).toBeGreaterThan(graces[1] ?? Number.POSITIVE_INFINITY);
    expect(lines[cancel]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} /);
    expect(problems).toEqual([]);
  });

  it("opens a slot's chart from the Tree page and follows it from busy to idle", async () => {
    const run = await hall.request({ cmd: 'spawn', name: '1ivar', mission: 'wait 30' });
    await runStarted(run.events_path);
    const page = await browserBoard.loggedIn();
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Tree' }).click();
    await page.getByRole('list', { name: 'Slots and queues' }).getByRole('link', { name: 'Statechart of slot:1ivar' }).click();
    const label = 'statechart of slot:1ivar';
    await page.getByRole('region', { name: label }).locator('[data-state="busy"][aria-current="true"]').waitFor();
    expect(await current(page, label)).toEqual(['busy']);
    await recordMarks(page, label);
    await hall.request({ cmd: 'cancel', id: run.id });
    await page.getByRole('region', { name: label }).locator('[data-state="idle"][aria-current="true"]').waitFor({ timeout: 15_000 });
    expect(await marks(page)).toContain('idle');
    await page
      .getByRole('list', { name: 'Events of slot:1ivar' })
      .getByText(/received xstate\.done\.actor/)
      .first()
      .waitFor();
    expect(problems).toEqual([]);
  });

  it("draws a busy slot's events a few times a second, each once: while the list slides past its last 200, no row already drawn changes", async () => {
    const { page, list } = await slotChart('ivar');
    // Rows added to or taken from the list, any change inside a row already there, and when rows were added.
    await page.evaluate(`(() => {
      const list = document.querySelector('[aria-label="Events of slot:ivar"]');
      window.rows = { added: 0, removed: 0, changed: 0, draws: [] };
      new MutationObserver((changes) => {
        if (changes.some((c) => c.target === list && c.addedNodes.length > 0)) window.rows.draws.push(performance.now());
        for (const c of changes) {
          if (c.target !== list) window.rows.changed++;
          else {
            window.rows.added += c.addedNodes.length;
            window.rows.removed += c.removedNodes.length;
          }
        }
      }).observe(list, { childList: true, subtree: true, characterData: true, attributes: true });
    })()`);
    const done = await hall.events('raider.done');
    // Each mission is a few events of the slot's: 60 of them are more than the list keeps.
    const runs = [];
    for (let i = 0; i < 60; i++) runs.push(await hall.request({ cmd: 'spawn', name: 'ivar', mission: `answer ${i}` }));
    const last = String(runs.at(-1)?.id);
    await done.waitFor((e) => e.id === last, 30_000);
    done.close();
    await list.getByText(ended(last)).waitFor();
    const rows = (await page.evaluate('window.rows')) as { added: number; removed: number; changed: number; draws: number[] };
    expect(await list.getByRole('listitem').count()).toBe(200);
    expect(rows.removed).toBeGreaterThan(0);
    expect(rows.changed).toBe(0);
    // The list is drawn at most every 250 ms (web/dashboard/statechart.js), all the events that came meanwhile at once:
    // a timer fires no earlier than asked, so no two draws are much closer (the half leaves room for a slow draw).
    const gaps = rows.draws.slice(1).map((at, i) => at - (rows.draws[i] ?? 0));
    expect(gaps.length).toBeGreaterThan(0);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(125);
    expect(problems).toEqual([]);
  });

  it("draws a flooded slot's events once a second: after a draw of 50 new rows or more, the next waits a second", async () => {
    // The plain slot's runs run side by side: each spawn's reply has its run's id.
    const { page, list } = await slotChart('ivar');
    await page.evaluate(`(() => {
      const list = document.querySelector('[aria-label="Events of slot:ivar"]');
      window.draws = [];
      new MutationObserver((changes) => {
        const added = changes.reduce((n, c) => n + (c.target === list ? c.addedNodes.length : 0), 0);
        if (added > 0) window.draws.push({ at: performance.now(), added });
      }).observe(list, { childList: true });
    })()`);
    // 150 missions in one write of the socket's: a few events each, hundreds a second for the slot.
    const frames = Array.from(
      { length: 150 },
      (_, i) => `${JSON.stringify({ type: 'command', payload: { cmd: 'spawn', name: 'ivar', mission: `answer ${i}` } })}\n`,
    );
    const replies = await rawExchange(hall.socket, frames.join(''), 150);
    await list.getByText(ended(String(replies.at(-1)?.id))).waitFor({ timeout: 30_000 });
    const draws = (await page.evaluate('window.draws')) as Array<{ at: number; added: number }>;
    const afterFloods = draws.slice(1).filter((_, i) => (draws[i]?.added ?? 0) >= 50);
    expect(afterFloods.length).toBeGreaterThan(0);
    // A timer fires no earlier than asked (web/dashboard/statechart.js, FLOOD_EVERY_MS): half of it leaves room for a slow draw.
    for (const draw of afterFloods) expect(draw.at - (draws[draws.indexOf(draw) - 1]?.at ?? 0)).toBeGreaterThanOrEqual(500);
    expect(problems).toEqual([]);
  });

  it('opens no live feed on a statechart page, which follows its actor on a stream of its own; the Runs page opens it, and leaving it closes it', async () => {
    // The plain slot ivar is made by its first mission, and stays.
    const first = await hall.request({ cmd: 'spawn', name: 'ivar', mission: 'answer first' });
    const page = await browserBoard.loggedIn();
    // Each event stream the page opens, and whether it closed it (the bus's feed: /api/events).
    await page.addInitScript(`(() => {
      const Base = window.EventSource;
      window.streams = [];
      window.EventSource = class extends Base {
        constructor(url, init) {
          super(url, init);
          const stream = { url: String(url), open: true };
          window.streams.push(stream);
          this.close = () => {
            stream.open = false;
            super.close();
          };
        }
      };
    })()`);
    await page.goto(`${browserBoard.board.url}#/actors/${encodeURIComponent('slot:ivar')}`);
    await page.reload();
    const list = page.getByRole('list', { name: 'Events of slot:ivar' });
    await list.getByText(ended(String(first.id))).waitFor();
    const streams = async (path: string) =>
      ((await page.evaluate('window.streams')) as Array<{ url: string; open: boolean }>).filter(
        (s) => new URL(s.url, browserBoard.board.url).pathname === path,
      );
    const open = async (path: string) => (await streams(path)).filter((s) => s.open).length;
    // Nothing on the page listens to the bus (web/dashboard/live.js): it never asked for it.
    expect(await streams('/api/events')).toEqual([]);
    expect(await open('/api/actors/stream')).toBe(1);
    // The chart follows its actor still.
    const run = await hall.request({ cmd: 'spawn', name: 'ivar', mission: 'answer while the feed is closed' });
    await list.getByText(ended(String(run.id))).waitFor();
    // The Runs page listens: the feed opens again, and a run shows as it starts and ends.
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Runs' }).click();
    await expect.poll(() => open('/api/events')).toBe(1);
    const later = await hall.request({ cmd: 'spawn', name: 'ivar', mission: 'answer with the feed open again' });
    const runs = page.getByRole('table', { name: 'Runs' });
    const row = runs.getByRole('row').filter({ has: page.getByRole('link', { name: String(later.id), exact: true }) });
    await row.getByRole('cell', { name: 'completed', exact: true }).waitFor();
    // Back to the chart: two seconds after the Runs page's views stopped listening, the feed is closed.
    await page.goto(`${browserBoard.board.url}#/actors/${encodeURIComponent('slot:ivar')}`);
    await list.waitFor();
    await expect.poll(() => open('/api/events'), { timeout: 10_000 }).toBe(0);
    expect(problems).toEqual([]);
  });

  it("opens a binding queue's chart from the Tree page: occupied while its run lives", async () => {
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'wait 30', binding: 'cron:nightly' });
    await runStarted(run.events_path);
    const page = await browserBoard.loggedIn();
    await page.goto(`${browserBoard.board.url}#/tree`);
    // A binding with nothing waiting is no queue of the tree's: the list of actors has it.
    await page.getByRole('list', { name: 'Actors' }).getByRole('link', { name: 'Statechart of binding:cron:nightly' }).click();
    const label = 'statechart of binding:cron:nightly';
    await page.getByRole('region', { name: label }).locator('[data-state="occupied"][aria-current="true"]').waitFor();
    expect(await current(page, label)).toEqual(['occupied']);
    await hall.request({ cmd: 'cancel', id: run.id });
    await page.getByRole('region', { name: label }).locator('[data-state="free"][aria-current="true"]').waitFor({ timeout: 15_000 });
    expect(problems).toEqual([]);
  });

  it('lists every live actor on the Tree page, each with its chart, and asks nothing of any other origin', async () => {
    const page = await browserBoard.loggedIn();
    await page.goto(`${browserBoard.board.url}#/tree`);
    const actors = page.getByRole('list', { name: 'Actors' });
    await actors.getByRole('link', { name: 'Statechart of hall' }).click();
    await page.getByRole('region', { name: 'statechart of hall' }).locator('[data-state="running"][aria-current="true"]').waitFor();
    // An actor that runs no machine (a run's process) has its page too: its events, no chart.
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'wait 30' });
    await runStarted(run.events_path);
    await page.goto(`${browserBoard.board.url}#/tree`);
    await actors.getByRole('link', { name: `Statechart of run:${run.id}/process` }).click();
    await page.getByText(`No statechart: run:${run.id}/process runs no machine`).waitFor();
    await page
      .getByRole('list', { name: `Events of run:${run.id}/process` })
      .getByText(/received xstate\.init/)
      .waitFor();
    await hall.request({ cmd: 'kill', id: run.id });
    expect(requested.some((url) => url.includes('/app/statecharts/run.svg'))).toBe(true);
    // The batched form of the actor's stream (src/protocol/actor-watch.ts).
    expect(requested.some((url) => /\/api\/actors\/stream\?id=[^&]+&batch=1$/.test(url))).toBe(true);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
  });
});
