/**
 * Does a page with a statechart open slow a burst? A `raider hall start`
 * process with its dashboard and the /bin/sh raider (lib.ts,
 * writeWaitingRaider); BURST missions pipelined to the plain slot bjorn
 * (board.ts, burstRuns), timed to the last raider.done, in ROUNDS rounds of
 * two sides:
 *
 *   none   -- no page open (the browser runs, with no page);
 *   chart  -- one page on `#/actors/slot:bjorn`, the chart of the slot the
 *             burst goes through, following it live: every mission is an
 *             event the slot receives and sends, so each is a message on
 *             the page's actor stream (and the page has the dashboard's live
 *             feed, as every page does).
 *
 * The sides alternate none/chart, chart/none from round to round, so drift
 * in the machine's load hits both alike. Before each burst the hall is idle
 * (lib.ts, waitIdle); its CPU time (/proc/PID/stat) is counted from the
 * burst's start until it is idle again, so work it leaves for after the last
 * raider.done counts too. The browser's processes and this process (which
 * drives the page with Playwright) are counted apart: they share the
 * machine's cores with the hall and its raiders. The load average is taken
 * at each burst's start. Target: chart / none <= 1.05, by the medians.
 *
 *   node --import tsx bench/chart-burst.ts [--quick] [--rounds N] [--missions N] [--plain] [--actor ID]
 *
 * `--plain`: the page is a window of a Chromium no driver watches
 * (plain-browser.ts) instead of a Playwright page; Playwright's own work
 * for each message a page receives is then not on the machine.
 */
import fs from 'node:fs';
import os from 'node:os';
import { chromium, type Browser, type Page } from 'playwright-core';
import { burstRuns, startBoardHall, type Board } from './board.js';
import { PlainBrowser } from './plain-browser.js';
import {
  argNumber,
  Client,
  count,
  fmt,
  machine,
  ownCpuMs,
  processCpuMs,
  quantile,
  runMain,
  summary,
  table,
  waitIdle,
  writeWaitingRaider,
} from './lib.js';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium'].find((p) => p !== undefined && p !== '' && fs.existsSync(p));
const BURST = argNumber('--missions') ?? count(500, 100);
const ROUNDS = argNumber('--rounds') ?? count(6, 2);
const PLAIN = process.argv.includes('--plain');
const CONFIG = 'raiders: { bjorn: {}, ivar: {} }\nlogs: { keep_events: 50 }\ndashboard: { listen: "127.0.0.1:0" }\n';
/** `--actor slot:ivar`: the chart of a slot the burst does not touch (the page's cost without the actor's messages). */
const ACTOR = process.argv.includes('--actor') ? String(process.argv[process.argv.indexOf('--actor') + 1]) : 'slot:bjorn';
/** A state the chart marks current: it is drawn and following. */
const MARKED = '[aria-label^="statechart of "] [aria-current="true"]';
const CHART_READY = `document.querySelector('${MARKED}') !== null`;
/**
 * Counts the SSE messages each actor stream of the page brings (window.actorMessages), to show the page followed the
 * burst: one per actor message in the single form, one per batch (`event: batch`, src/protocol/actor-watch.ts) in the
 * batched form the page asks for.
 */
const COUNT_ACTOR_MESSAGES = `(() => {
  const Base = window.EventSource;
  window.actorMessages = 0;
  window.EventSource = class extends Base {
    constructor(url, init) {
      super(url, init);
      if (!String(url).includes('/api/actors/stream')) return;
      this.addEventListener('message', () => window.actorMessages++);
      this.addEventListener('batch', () => window.actorMessages++);
    }
  };
})()`;

/** A page on a chart, opened and closed the same way by either browser. */
interface ChartBrowser {
  pid(): number;
  open(url: string): Promise<() => Promise<number>>;
  close(): Promise<void>;
}

async function playwrightBrowser(executable: string, board: Board): Promise<ChartBrowser> {
  const browser: Browser = await chromium.launch({ executablePath: executable, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  const context = await browser.newContext();
  await context.addInitScript(COUNT_ACTOR_MESSAGES);
  const login = await context.newPage();
  // The token becomes a cookie of the context.
  await login.goto(`${board.url}?token=${board.token}`);
  await login.close();
  return {
    pid: () => 0,
    open: async (url) => {
      const page: Page = await context.newPage();
      await page.goto(url);
      // A locator, not a string to evaluate: the dashboard's CSP forbids eval.
      await page.locator(MARKED).first().waitFor();
      return async () => {
        const messages = Number(await page.evaluate('window.actorMessages'));
        await page.close();
        return messages;
      };
    },
    close: () => browser.close(),
  };
}

async function plainBrowser(executable: string, board: Board): Promise<ChartBrowser> {
  const plain = PlainBrowser.launch(executable);
  const login = await plain.open(`${board.url}?token=${board.token}`, `document.querySelector('table[aria-label="Runs"]') !== null`);
  await plain.closeTab(login);
  return {
    pid: () => plain.pid,
    open: async (url) => {
      const tab = await plain.open(url, CHART_READY);
      return async () => {
        // Attached only for this check: the page still draws the chart after the burst.
        await plain.waitFor(tab, CHART_READY);
        await plain.closeTab(tab);
        return Number.NaN;
      };
    },
    close: () => plain.close(),
  };
}

/** Every process under `root` (its children, theirs...), `root` included, from /proc. */
function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
    } catch {
      // Gone.
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const child of parents.get(pid) ?? []) walk(child);
  };
  walk(root);
  return out;
}

/**
 * CPU ms of the raiders, from /proc: the children the hall has reaped
 * (cutime + cstime of the hall), and any process under it (a helper that
 * starts raiders, with the children it reaped: utime + stime + cutime + cstime).
 */
function raidersCpuMs(hallPid: number): number {
  let total = 0;
  for (const pid of processTree(hallPid)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Fields 14-17 of stat (utime, stime, cutime, cstime) are 11-14 after the command name, in 10 ms ticks.
      for (const i of pid === hallPid ? [13, 14] : [11, 12, 13, 14]) total += Number(fields[i]) * 10;
    } catch {
      // Gone.
    }
  }
  return total;
}

/** CPU ms of each process under this one that is not the hall's: the browser's. */
function browserCpu(hallPid: number, plainPid: number): Map<number, number> {
  const hall = new Set(processTree(hallPid));
  const roots = plainPid > 0 ? [plainPid] : [process.pid];
  const cpu = new Map<number, number>();
  for (const pid of roots.flatMap(processTree)) {
    if (pid === process.pid || hall.has(pid)) continue;
    try {
      cpu.set(pid, processCpuMs(pid));
    } catch {
      // Gone.
    }
  }
  return cpu;
}

/**
 * The browser's CPU between two readings: of each process still there at the
 * second (all of it for one that began meanwhile). A process that ended
 * meanwhile (a closed page's) is left out, not taken away.
 */
function browserCpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

interface Burst {
  side: 'none' | 'chart';
  round: number;
  wallMs: number;
  hallCpuMs: number;
  /** The fork server's and the raiders' it reaped. */
  raidersCpuMs: number;
  browserCpuMs: number;
  benchCpuMs: number;
  load1: number;
  /** Messages the chart's actor stream brought the page, from its opening to the burst's end (Playwright only). */
  messages: number;
}

const median = (values: readonly number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

async function main(): Promise<void> {
  if (!CHROMIUM) throw new Error('no Chromium: install the chromium package or set CHROMIUM_PATH');
  const loadBefore = os.loadavg();
  const { hall, board } = await startBoardHall('chart-burst', CONFIG, writeWaitingRaider);
  const hallPid = hall.child.pid ?? 0;
  const browser = PLAIN ? await plainBrowser(CHROMIUM, board) : await playwrightBrowser(CHROMIUM, board);
  const bursts: Burst[] = [];
  try {
    // The slot is made with its first mission; one burst, unmeasured, warms the hall's code up.
    const client = await Client.connect(hall.socket);
    await client.command({ cmd: 'spawn', name: 'bjorn', mission: 'go' });
    await client.command({ cmd: 'spawn', name: 'ivar', mission: 'go' });
    client.close();
    await burstRuns(hall, BURST);
    const chartUrl = `${board.url}#/actors/${encodeURIComponent(ACTOR)}`;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['none', 'chart'] as const) : (['chart', 'none'] as const);
      for (const side of order) {
        const closePage = side === 'chart' ? await browser.open(chartUrl) : null;
        await waitIdle(hallPid);
        const load1 = os.loadavg()[0] ?? Number.NaN;
        const hall0 = processCpuMs(hallPid);
        const browser0 = browserCpu(hallPid, browser.pid());
        const raiders0 = raidersCpuMs(hallPid);
        const bench0 = ownCpuMs();
        const { ms } = await burstRuns(hall, BURST);
        await waitIdle(hallPid);
        const burst: Burst = {
          side,
          round,
          wallMs: ms,
          hallCpuMs: processCpuMs(hallPid) - hall0,
          raidersCpuMs: raidersCpuMs(hallPid) - raiders0,
          browserCpuMs: browserCpuSince(browser0, browserCpu(hallPid, browser.pid())),
          benchCpuMs: ownCpuMs() - bench0,
          load1,
          messages: closePage ? await closePage() : Number.NaN,
        };
        bursts.push(burst);
        process.stderr.write(
          `round ${round + 1} ${side.padEnd(5)} wall ${fmt(ms, 0)} ms, hall CPU ${fmt(burst.hallCpuMs, 0)} ms, browser CPU ${fmt(burst.browserCpuMs, 0)} ms, load ${fmt(load1, 1)}\n`,
        );
      }
    }
  } finally {
    await browser.close();
    await hall.stop();
  }
  const loadAfter = os.loadavg();
  const of = (side: Burst['side'], pick: (b: Burst) => number) => bursts.filter((b) => b.side === side).map(pick);
  const row = (label: string, side: Burst['side']) => [
    label,
    String(of(side, (b) => b.wallMs).length),
    fmt(median(of(side, (b) => b.wallMs)), 0),
    fmt(median(of(side, (b) => b.hallCpuMs)), 0),
    fmt(median(of(side, (b) => b.raidersCpuMs)), 0),
    fmt(median(of(side, (b) => b.browserCpuMs)), 0),
    fmt(median(of(side, (b) => b.benchCpuMs)), 0),
    fmt(median(of(side, (b) => b.load1)), 1),
  ];
  const wallRatio = median(of('chart', (b) => b.wallMs)) / median(of('none', (b) => b.wallMs));
  const cpuRatio = median(of('chart', (b) => b.hallCpuMs)) / median(of('none', (b) => b.hallCpuMs));
  // What the page adds to the machine's work (its browser, and the hall's extra), against the burst's own (hall and raiders):
  // on a machine the burst keeps busy, about what it would add to the wall time.
  const med = (side: Burst['side'], pick: (b: Burst) => number) => median(of(side, pick));
  const added =
    (med('chart', (b) => b.browserCpuMs) + med('chart', (b) => b.hallCpuMs) - med('none', (b) => b.hallCpuMs)) /
    (med('none', (b) => b.hallCpuMs) + med('none', (b) => b.raidersCpuMs));
  // Each round's own ratio: the two sides of a round ran next to each other.
  const perRound = Array.from({ length: ROUNDS }, (_, r) => {
    const side = (s: Burst['side']) => bursts.find((b) => b.round === r && b.side === s);
    return {
      wall: (side('chart')?.wallMs ?? NaN) / (side('none')?.wallMs ?? NaN),
      cpu: (side('chart')?.hallCpuMs ?? NaN) / (side('none')?.hallCpuMs ?? NaN),
    };
  });
  const out = process.stdout;
  out.write(`# A statechart page open during a burst (${PLAIN ? 'a Chromium no driver watches' : 'a Playwright page'})\n\n${machine()}\n`);
  out.write(`load average before: ${loadBefore.map((l) => fmt(l)).join(' ')}, after: ${loadAfter.map((l) => fmt(l)).join(' ')}\n\n`);
  out.write(
    `${table(
      ['round', 'side', 'wall ms', 'hall CPU ms', 'raiders CPU ms', 'browser CPU ms', 'bench CPU ms', 'load 1 min', 'page messages'],
      bursts.map((b) => [
        String(b.round + 1),
        b.side,
        fmt(b.wallMs, 0),
        fmt(b.hallCpuMs, 0),
        fmt(b.raidersCpuMs, 0),
        fmt(b.browserCpuMs, 0),
        fmt(b.benchCpuMs, 0),
        fmt(b.load1, 1),
        Number.isNaN(b.messages) ? '-' : String(b.messages),
      ]),
      2,
    )}\n\n`,
  );
  out.write(
    `${table(
      [`${BURST}-mission burst, medians`, 'n', 'wall ms', 'hall CPU ms', 'raiders CPU ms', 'browser CPU ms', 'bench CPU ms', 'load 1 min'],
      [row('no page', 'none'), row(`chart of ${ACTOR} open`, 'chart')],
    )}\n\n`,
  );
  out.write(
    `chart / none, of the medians: wall ${fmt(wallRatio, 3)} (target <= 1.05), hall CPU ${fmt(cpuRatio, 3)}\n` +
      `CPU the page adds (browser + the hall's extra) / the burst's CPU (hall + raiders): ${fmt(added, 3)}\n` +
      `each round's chart / none: wall ${perRound.map((r) => fmt(r.wall)).join(', ')}; hall CPU ${perRound.map((r) => fmt(r.cpu)).join(', ')}\n`,
  );
  summary([
    {
      bench: 'chart-burst',
      metric: `${BURST}-mission burst, ${ACTOR}'s chart open / none, median wall`,
      value: fmt(wallRatio, 3),
      target: '<= 1.05',
      met: wallRatio <= 1.05,
    },
    { bench: 'chart-burst', metric: `the same, hall CPU`, value: fmt(cpuRatio, 3), target: '<= 1.05', met: cpuRatio <= 1.05 },
    { bench: 'chart-burst', metric: `CPU the page adds / the burst's CPU`, value: fmt(added, 3) },
  ]);
}

runMain(main);
