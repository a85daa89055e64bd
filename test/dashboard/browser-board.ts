/**
 * One Chromium and one hall with a dashboard for a browser test file (or a
 * describe block): started together before its tests, closed after them.
 * `newPage` opens a page in a fresh browser context (its own cookies), closed
 * with the rest; `problems` collects what a page reports (script errors, CSP
 * violations) when opened with `loggedIn`, and `requested`, `foreign` and
 * `failedLoads` what it asked for.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, onTestFailed } from 'vitest';
import type { TestHall } from '../support/test-hall.js';
import { launchBrowser } from './browser.js';
import { startBoardHall, type Board } from './dashboard-support.js';

export interface BrowserBoard {
  readonly browser: Browser;
  readonly hall: TestHall;
  readonly board: Board;
  /** Script errors and CSP violations of pages opened with loggedIn (Chromium reports both on the console). */
  readonly problems: string[];
  /** Every URL a page opened with loggedIn asked for, and those outside the dashboard it logged in to. */
  readonly requested: string[];
  readonly foreign: string[];
  /** Answers of 400 and above to those pages (`STATUS URL`): some tests cause them on purpose (a late answer's 409). */
  readonly failedLoads: string[];
  /** A page in a browser context of its own, closed when the file is done. */
  newPage(): Promise<Page>;
  /** A new page logged in to a dashboard (this one by default) with its token, reporting into `problems`. */
  loggedIn(target?: Board): Promise<Page>;
}

export function useBrowserBoard(config?: string): BrowserBoard {
  let browser: Browser | undefined;
  let started: { hall: TestHall; board: Board } | undefined;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];
  const requested: string[] = [];
  const foreign: string[] = [];
  const failedLoads: string[] = [];

  beforeAll(async () => {
    [browser, started] = await Promise.all([launchBrowser(), startBoardHall(config)]);
  }, 60_000);
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await started?.hall.stop();
  });

  const running = () => {
    if (!browser || !started) throw new Error('the browser and the hall start in beforeAll: use them inside a test');
    return { browser, ...started };
  };

  const newPage = async (): Promise<Page> => {
    const context = await running().browser.newContext();
    contexts.push(context);
    return context.newPage();
  };

  return {
    get browser() {
      return running().browser;
    },
    get hall() {
      return running().hall;
    },
    get board() {
      return running().board;
    },
    problems,
    requested,
    foreign,
    failedLoads,
    newPage,
    async loggedIn(target?: Board) {
      const to = target ?? running().board;
      const page = await newPage();
      page.on('pageerror', (err) => problems.push(err.message));
      page.on('request', (req) => {
        requested.push(req.url());
        if (!req.url().startsWith(to.url)) foreign.push(req.url());
      });
      page.on('response', (res) => {
        if (res.status() >= 400) failedLoads.push(`${res.status()} ${res.url()}`);
      });
      const said: string[] = [];
      page.on('console', (message) => {
        said.push(`${message.type()}: ${message.text()}`);
        // A stopped hall's event stream fails to reconnect; that is not the page's fault.
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
      });
      // A failed wait says only what it waited for: show what the page showed and said instead.
      onTestFailed(async () => {
        const shown = await page
          .evaluate('document.body.innerText')
          .then(String)
          .catch((err: unknown) => `(could not read the page: ${String(err)})`);
        console.error(`the page at ${page.url()} showed:\n${shown}\nits console said:\n${said.join('\n') || '(nothing)'}`);
      });
      await page.goto(`${to.url}?token=${to.token}`);
      return page;
    },
  };
}
