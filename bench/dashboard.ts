/**
 * The dashboard, side by side in one run, on a `raider hall start` process
 * with the minimal /bin/sh raider and Chromium (CHROMIUM_PATH or
 * /usr/bin/chromium) driving real pages:
 *
 *   latency  -- a run spawned 10 times a second for LATENCY_S seconds: from
 *               the spawn request's sending (its raider.spawned comes after)
 *               to its row in the page's Runs table (a MutationObserver's
 *               Date.now(), the same clock).
 *               Targets: median <= 100 ms, p99 <= 250 ms.
 *   burst    -- BURST missions pipelined to a plain slot until the last
 *               raider.done, with no dashboard open, then with three tabs
 *               open in a Chromium that no driver watches (plain-browser.ts),
 *               then with three pages driven by Playwright; twice each,
 *               alternating, so the machine's drift hits every side.
 *               Target: three / none <= 1.1. Beside it the hall's CPU time,
 *               Chromium's (all its processes) and the driven pages' main
 *               threads' busy time (Chromium's Performance.getMetrics).
 *   memory   -- the hall's RSS after 100 runs with no page open, then with
 *               five pages open after the same 100 runs. Target: <= 15 MiB more.
 *   load     -- first page load: navigation start to the Runs table (50
 *               runs) drawn, with the login cookie, a new page each time,
 *               timed by the page itself: the first task after the frame
 *               that has the table (an init script's MutationObserver, then
 *               requestAnimationFrame, then setTimeout). Target: <= 300 ms.
 *               Beside it the same page's time as the driver sees it (a
 *               getByRole wait, then performance.now()), which adds
 *               Playwright's own script injected into each new page.
 *   size     -- the page's scripts and styles, gzipped. Target: <= 150 KiB.
 *
 *   node --import tsx bench/dashboard.ts [--quick]
 */
import fs from 'node:fs';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import { PlainBrowser } from './plain-browser.js';
import { type Board, burstRuns, startBoardHall as startBoardHallWith } from './board.js';
import { compareRunIds } from '../src/domain/run-id.js';
import {
  Client,
  count,
  fmt,
  machine,
  nowMs,
  processCpuMs,
  quantile,
  rssMb,
  runMain,
  sleep,
  stats,
  Subscription,
  summary,
  table,
  waitIdle,
  writeMinimalRaider,
  type HallProcess,
  type SummaryRow,
} from './lib.js';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium'].find((p) => p !== undefined && p !== '' && fs.existsSync(p));
const LATENCY_S = count(20, 5);
const BURST = count(500, 100);
const LOADS = count(15, 5);
const MEMORY_RUNS = 100;
/** 50 events files kept per slot: the Runs table lists past runs from them, as a hall that runs a while would. */
const CONFIG = 'raiders: { bjorn: {} }\nlogs: { keep_events: 50 }\ndashboard: { listen: "127.0.0.1:0" }\n';

const startBoardHall = (label: string) => startBoardHallWith(label, CONFIG, writeMinimalRaider);

function get(board: Board, route: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    http
      .get(new URL(route, board.url), { headers: { Authorization: `Bearer ${board.token}` } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${route}: ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}

async function openPage(browser: Browser, board: Board): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${board.url}?token=${board.token}`);
  await page.getByRole('table', { name: 'Runs' }).waitFor();
  return page;
}

/** Spawns `n` missions pipelined on one connection each of 10, and waits for every raider.done. Returns the time taken. */
async function burst(hall: HallProcess, n: number): Promise<number> {
  return (await burstRuns(hall, n)).ms;
}

async function latency(browser: Browser): Promise<number[]> {
  const { hall, board } = await startBoardHall('latency');
  try {
    const page = await openPage(browser, board);
    // When each run's link first shows in the Runs table, by the page's clock (the same system clock as the hall's).
    await page.evaluate(`(() => {
      window.seenAt = {};
      const table = document.querySelector('table[aria-label="Runs"]');
      new MutationObserver(() => {
        const now = Date.now();
        for (const a of table.querySelectorAll('tbody a')) if (!(a.textContent in window.seenAt)) window.seenAt[a.textContent] = now;
      }).observe(table, { childList: true, subtree: true, characterData: true });
    })()`);
    const sub = await Subscription.open(hall.socket);
    const client = await Client.connect(hall.socket);
    // From the spawn request's sending: the run is on the bus after that, so this bounds the bus → page time from above.
    // (The bus event's own time is no start line: the page may fetch the run for an earlier event before its raider.spawned.)
    const sentAt = new Map<string, number>();
    const ids: string[] = [];
    const t0 = nowMs();
    for (let i = 0; i < LATENCY_S * 10; i++) {
      const due = t0 + i * 100;
      const wait = due - nowMs();
      if (wait > 0) await sleep(wait);
      const sent = Date.now();
      const reply = await client.command({ cmd: 'spawn', name: 'bjorn', mission: 'go' });
      ids.push(String(reply.id));
      sentAt.set(String(reply.id), sent);
    }
    await Promise.all(ids.map((id) => sub.done(id, 60_000)));
    // Polled from here: a predicate that Playwright evaluates in the page is an eval, which the page's CSP refuses.
    const allSeen = `${JSON.stringify(ids)}.every((id) => id in window.seenAt)`;
    for (const deadline = nowMs() + 30_000; !(await page.evaluate(allSeen)); await sleep(50)) {
      if (nowMs() > deadline) throw new Error('the page did not show every run within 30 s');
    }
    const seen = (await page.evaluate('window.seenAt')) as Record<string, number>;
    client.close();
    sub.close();
    return ids.flatMap((id) => {
      const at = sentAt.get(id);
      const shown = seen[id];
      return at && shown !== undefined ? [shown - at] : [];
    });
  } finally {
    await hall.stop();
  }
}

/** The Chromium that playwright-core started: a child of this process. */
function chromiumPid(): number {
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      // /usr/bin/chromium is Debian's shell script, which execs the browser: find it by the pipe playwright-core drives it through.
      if (parent === process.pid && fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('--remote-debugging-pipe'))
        return Number(name);
    } catch {
      // Gone meanwhile, or not ours.
    }
  }
  throw new Error('no Chromium process under this one');
}

/** CPU time so far of process `root` and of each process under it (Chromium's renderers, GPU, ...), in ms by pid. */
function treeCpuMs(root: number): Map<number, number> {
  const parents = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parents.get(p)) if (p === root) return true;
    return false;
  };
  const cpu = new Map<number, number>();
  for (const pid of parents.keys()) {
    if (!inTree(pid)) continue;
    try {
      cpu.set(pid, processCpuMs(pid));
    } catch {
      // Gone meanwhile.
    }
  }
  return cpu;
}

/** Waits (at most 10 s) until the processes under `root` use no more than 20 ms of CPU in half a second. */
async function waitTreeIdle(root: number): Promise<void> {
  const deadline = nowMs() + 10_000;
  let before = treeCpuMs(root);
  while (nowMs() < deadline) {
    await sleep(500);
    const now = treeCpuMs(root);
    if (cpuSince(before, now) <= 20) return;
    before = now;
  }
}

/**
 * The CPU the processes of `after` used since `before`: one that started
 * meanwhile counts whole, one that ended meanwhile (a closed page's renderer)
 * not at all, rather than as a loss.
 */
function cpuSince(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let ms = 0;
  for (const [pid, used] of after) ms += used - (before.get(pid) ?? 0);
  return ms;
}

/** Chromium's metrics of each page, from when this is made (its counters start at Performance.enable). */
async function pagesMetrics(pages: readonly Page[]): Promise<() => Promise<number>> {
  const sessions = await Promise.all(pages.map((page) => page.context().newCDPSession(page)));
  for (const cdp of sessions) await cdp.send('Performance.enable');
  /** The pages' main threads' busy time so far (ms, summed): TaskDuration. */
  return async () => {
    let ms = 0;
    for (const cdp of sessions) {
      const { metrics } = await cdp.send('Performance.getMetrics');
      ms += (metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0) * 1000;
    }
    return ms;
  };
}

interface BurstSides {
  none: number[];
  /** Three tabs of a browser no driver watches (plain-browser.ts): the target. */
  three: number[];
  /** Three pages driven by Playwright, which instruments each (its own cost, beside). */
  driven: number[];
  cpuNone: number[];
  cpuThree: number[];
  cpuDriven: number[];
  /** Chromium's CPU (every process of it) during each burst. */
  browserNone: number[];
  browserThree: number[];
  browserDriven: number[];
  /** The three driven pages' main threads, busy during each burst with them (ms, summed). */
  pagesBusy: number[];
}

const RUNS_DRAWN_NOW = `document.querySelector('table[aria-label="Runs"] tbody tr') !== null`;

/** The newest of run ids, by when they started. */
function newestRun(ids: readonly string[]): string {
  return ids.reduce((newest, id) => (compareRunIds(id, newest) > 0 ? id : newest), ids[0] ?? '');
}

/** True in a page whose Runs table shows the run `id` and no run running. */
function burstDrawn(id: string): string {
  return `(() => {
    const cells = [...document.querySelectorAll('table[aria-label="Runs"] td')].map((td) => td.textContent);
    return cells.includes(${JSON.stringify(id)}) && !cells.includes('running');
  })()`;
}

async function burstSides(browser: Browser, browserPid: number, chromiumPath: string): Promise<BurstSides> {
  const { hall, board } = await startBoardHall('burst');
  const plain = PlainBrowser.launch(chromiumPath);
  const sides: BurstSides = {
    none: [],
    three: [],
    driven: [],
    cpuNone: [],
    cpuThree: [],
    cpuDriven: [],
    browserNone: [],
    browserThree: [],
    browserDriven: [],
    pagesBusy: [],
  };
  try {
    await burst(hall, Math.min(50, BURST)); // warm-up
    for (const side of ['none', 'three', 'driven', 'none', 'three', 'driven'] as const) {
      await waitIdle(hall.child.pid ?? 0);
      const tabs =
        side === 'three' ? await Promise.all([0, 1, 2].map(() => plain.open(`${board.url}?token=${board.token}`, RUNS_DRAWN_NOW))) : [];
      const pages = side === 'driven' ? await Promise.all([0, 1, 2].map(() => openPage(browser, board))) : [];
      // Open before the burst comes, as a person's dashboard would be: what loading them costs is done.
      if (side !== 'none') await waitTreeIdle(side === 'three' ? plain.pid : browserPid);
      const pagesBusyMs = await pagesMetrics(pages);
      const busy0 = await pagesBusyMs();
      // The hall's own CPU per side: the pages' Chromium shares the machine's cores, the hall's CPU time does not count it.
      const chromiumPid = side === 'three' ? plain.pid : browserPid;
      const browser0 = treeCpuMs(chromiumPid);
      const cpu0 = processCpuMs(hall.child.pid ?? 0);
      const { ms, ids } = await burstRuns(hall, BURST);
      const cpu = processCpuMs(hall.child.pid ?? 0) - cpu0;
      const browserCpu = cpuSince(browser0, treeCpuMs(chromiumPid));
      // The tabs drew the burst (a hidden page would not have, and would cost less): its newest run shows, ended.
      for (const tab of tabs) await plain.waitFor(tab, burstDrawn(newestRun(ids)));
      if (side === 'none') {
        sides.none.push(ms);
        sides.cpuNone.push(cpu);
        sides.browserNone.push(browserCpu);
      } else if (side === 'three') {
        sides.three.push(ms);
        sides.cpuThree.push(cpu);
        sides.browserThree.push(browserCpu);
      } else {
        sides.driven.push(ms);
        sides.cpuDriven.push(cpu);
        sides.browserDriven.push(browserCpu);
        sides.pagesBusy.push((await pagesBusyMs()) - busy0);
      }
      for (const tab of tabs) await plain.closeTab(tab);
      for (const p of pages) await p.context().close();
    }
  } finally {
    await plain.close();
    await hall.stop();
  }
  return sides;
}

async function memory(browser: Browser): Promise<{ none: number; five: number }> {
  const measure = async (pagesOpen: number): Promise<number> => {
    const { hall, board } = await startBoardHall(`memory-${pagesOpen}`);
    try {
      const pages = await Promise.all(Array.from({ length: pagesOpen }, () => openPage(browser, board)));
      await burst(hall, MEMORY_RUNS);
      await waitIdle(hall.child.pid ?? 0);
      // What the pages asked for after the runs is answered: the pages show the last run.
      for (const p of pages) await p.getByRole('cell', { name: 'completed', exact: true }).first().waitFor();
      await sleep(500);
      const rss = rssMb(hall.child.pid ?? 0);
      for (const p of pages) await p.context().close();
      return rss;
    } finally {
      await hall.stop();
    }
  };
  const none = await measure(0);
  const five = await measure(5);
  return { none, five };
}

/**
 * In each new page: a promise of performance.now() in the first task after
 * the frame that has the Runs table with its rows (requestAnimationFrame runs
 * just before that frame is drawn, the setTimeout after it).
 */
const RUNS_DRAWN = `window.runsDrawn = new Promise((resolve) => {
  new MutationObserver((_records, observer) => {
    if (!document.querySelector('table[aria-label="Runs"] tbody tr')) return;
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
  }).observe(document, { childList: true, subtree: true });
});`;

async function firstLoads(browser: Browser): Promise<{ loads: number[]; driver: number[]; floor: number[]; gzipped: number }> {
  const { hall, board } = await startBoardHall('load');
  try {
    // A full first view: the table shows 50 runs.
    await burst(hall, 50);
    const context = await browser.newContext();
    const login = await context.newPage();
    await login.goto(`${board.url}?token=${board.token}`);
    await login.close();
    await context.addInitScript(RUNS_DRAWN);
    const loads: number[] = [];
    const driver: number[] = [];
    // The floor: a new page that loads one small file from the same server (the browser's own cost on this machine).
    const floor: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const bare = await context.newPage();
      await bare.goto(`${board.url}app/icon.svg`);
      floor.push(Number(await bare.evaluate('performance.now()')));
      await bare.close();
      const page = await context.newPage();
      await page.goto(board.url);
      loads.push(Number(await page.evaluate('window.runsDrawn')));
      await page.getByRole('table', { name: 'Runs' }).waitFor();
      driver.push(Number(await page.evaluate('performance.now()')));
      await page.close();
    }
    const html = (await get(board, '/')).toString();
    const routes = [...html.matchAll(/(?:href|src)="(\/[^"]+)"/g)].map((m) => m[1] ?? '');
    const importMap = /<script type="importmap">(.*?)<\/script>/.exec(html)?.[1] ?? '{}';
    routes.push(...Object.values((JSON.parse(importMap) as { imports: Record<string, string> }).imports));
    // Unbundled (no `npm run build`), the page imports our modules one by one: every /app/ script.
    if (!routes.some((route) => route.endsWith('/bundle.js')))
      for (const name of fs.readdirSync(new URL('../web/dashboard/', import.meta.url)))
        if (name.endsWith('.js')) routes.push(`/app/${name}`);
    let gzipped = 0;
    // Each file once: the page names this version of it (/app/v-HASH/main.js), the list above the plain route.
    const files = new Set(routes.map((route) => route.replace(/^\/(app|vendor)\/v-[0-9a-f]+\//, '/$1/')));
    for (const route of files) if (!route.endsWith('.svg')) gzipped += gzipSync(await get(board, route)).length;
    await context.close();
    return { loads, driver, floor, gzipped };
  } finally {
    await hall.stop();
  }
}

async function main(): Promise<void> {
  if (CHROMIUM === undefined) throw new Error('no Chromium: install the chromium package or set CHROMIUM_PATH');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  try {
    const latencies = await latency(browser);
    const lat = {
      ...stats(latencies),
      p99: quantile(
        [...latencies].sort((x, y) => x - y),
        0.99,
      ),
    };
    const b = await burstSides(browser, chromiumPid(), CHROMIUM);
    const mem = await memory(browser);
    const load = await firstLoads(browser);
    const loadStats = stats(load.loads);
    const driverStats = stats(load.driver);
    const floorStats = stats(load.floor);
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const ratio = mean(b.three) / mean(b.none);
    const kib = load.gzipped / 1024;
    const rows: SummaryRow[] = [
      {
        bench: 'dashboard',
        metric: `spawn sent (so bus event) → row in the page at 10 runs/s, median / p99 (ms), n=${lat.n}`,
        value: `${fmt(lat.median, 1)} / ${fmt(lat.p99, 1)}`,
        target: '<= 100 / <= 250 ms',
        met: lat.median <= 100 && lat.p99 <= 250,
      },
      {
        bench: 'dashboard',
        metric: `${BURST}-mission burst: none / three dashboards open in a browser no driver watches (ms, mean of 2)`,
        value: `${fmt(mean(b.none), 0)} / ${fmt(mean(b.three), 0)} = ${fmt(ratio, 2)}x`,
        target: '<= 1.1x',
        met: ratio <= 1.1,
      },
      {
        bench: 'dashboard',
        metric: `${BURST}-mission burst: three pages driven by Playwright (ms, mean of 2; its instrumentation's cost included)`,
        value: `${fmt(mean(b.driven), 0)} = ${fmt(mean(b.driven) / mean(b.none), 2)}x`,
      },
      {
        bench: 'dashboard',
        metric: `${BURST}-mission burst: hall CPU, none / three / driven (ms, mean of 2)`,
        value: `${fmt(mean(b.cpuNone), 0)} / ${fmt(mean(b.cpuThree), 0)} / ${fmt(mean(b.cpuDriven), 0)}`,
      },
      {
        bench: 'dashboard',
        metric: `${BURST}-mission burst: Chromium's CPU, none / three / driven (ms, mean of 2); the driven pages' main threads busy (ms)`,
        value: `${fmt(mean(b.browserNone), 0)} / ${fmt(mean(b.browserThree), 0)} / ${fmt(mean(b.browserDriven), 0)}; ${fmt(mean(b.pagesBusy), 0)}`,
      },
      {
        bench: 'dashboard',
        metric: `hall RSS after ${MEMORY_RUNS} runs: none / five dashboards open (MiB)`,
        value: `${fmt(mem.none, 1)} / ${fmt(mem.five, 1)} (+${fmt(mem.five - mem.none, 1)})`,
        target: '<= +15 MiB',
        met: mem.five - mem.none <= 15,
      },
      {
        bench: 'dashboard',
        metric: `first page load to the Runs table of 50 runs drawn, median / p90 (ms), n=${loadStats.n}; as the driver sees it; floor: a new page of one small file`,
        value: `${fmt(loadStats.median, 0)} / ${fmt(loadStats.p90, 0)}; driver ${fmt(driverStats.median, 0)} / ${fmt(driverStats.p90, 0)}; floor ${fmt(floorStats.median, 0)} / ${fmt(floorStats.p90, 0)}`,
        target: '<= 300 ms',
        met: loadStats.median <= 300,
      },
      { bench: 'dashboard', metric: 'page scripts and styles, gzipped (KiB)', value: fmt(kib, 1), target: '<= 150 KiB', met: kib <= 150 },
    ];
    process.stdout.write(`${machine()}\n\n`);
    process.stdout.write(
      `${table(
        ['metric', 'value', 'target', 'met'],
        rows.map((r) => [r.metric, r.value, r.target ?? '', r.met === undefined ? '' : r.met ? 'met' : 'MISSED']),
      )}\n`,
    );
    summary(rows);
  } finally {
    await browser.close();
  }
}

runMain(main);
