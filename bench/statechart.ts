/**
 * The dashboard's statechart page (docs/dashboard.md, "Statecharts") on a
 * `raider hall start` process with the /bin/sh raider that can wait
 * (lib.ts, writeWaitingRaider) and Chromium (CHROMIUM_PATH or /usr/bin/chromium):
 *
 *   latency  -- the chart of the numbered slot 1bjorn open in a page driven
 *               by Playwright, a run spawned on it 10 times a second for
 *               LATENCY_S seconds; each run moves the slot idle → busy →
 *               idle. From each run's raider.done on the bus (the event's
 *               own time) to the page marking `idle` after it, and from the
 *               spawn request's sending to the page marking `busy` (both by
 *               the system clock: a MutationObserver's Date.now() in the page;
 *               each mark against the newest such event before it, so runs
 *               that overlap under load are counted once per mark).
 *               Target: median <= 100 ms.
 *
 * A burst with a chart open against none is bench/chart-burst.ts.
 *
 *   node --import tsx bench/statechart.ts [--quick]
 */
import fs from 'node:fs';
import os from 'node:os';
import { chromium } from 'playwright-core';
import { startBoardHall } from './board.js';
import { Client, count, fmt, machine, nowMs, runMain, sleep, stats, Subscription, summary, table, writeWaitingRaider } from './lib.js';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium'].find((p) => p !== undefined && p !== '' && fs.existsSync(p));
const LATENCY_S = count(20, 5);
const CONFIG = 'raiders: { bjorn: {}, ivar: {} }\nlogs: { keep_events: 50 }\ndashboard: { listen: "127.0.0.1:0" }\n';

/**
 * Each state the chart marks current, with the page's Date.now(), kept on window. From each change's old value
 * (one that was not "true" marked the state): the page marks each state of a batch of the actor's stream in order
 * in one task, so a run's `busy` may be marked and unmarked again before the observer is called.
 */
const RECORD_MARKS = `(() => {
  window.marks = [];
  const box = document.querySelector('[aria-label^="statechart of "]');
  new MutationObserver((changes) => {
    const now = Date.now();
    for (const c of changes)
      if (c.oldValue !== 'true' && !c.target.classList.contains('sc-compound')) window.marks.push([c.target.getAttribute('data-state'), now]);
  }).observe(box, { attributes: true, attributeFilter: ['aria-current'], attributeOldValue: true, subtree: true });
})()`;

/** Runs the spawns and returns [done → idle, sent → busy] latencies in ms. */
async function latency(): Promise<{ idle: number[]; busy: number[] }> {
  const { hall, board } = await startBoardHall('statechart-latency', CONFIG, writeWaitingRaider);
  const browser = await chromium.launch({
    ...(CHROMIUM ? { executablePath: CHROMIUM } : {}),
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  try {
    const client = await Client.connect(hall.socket);
    const sub = await Subscription.open(hall.socket, 'raider.done');
    // The slot is made with its first mission.
    const first = await client.command({ cmd: 'spawn', name: '1bjorn', mission: 'go' });
    await sub.done(String(first.id));
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${board.url}?token=${board.token}`);
    await page.goto(`${board.url}#/actors/slot:1bjorn`);
    await page.locator('[data-state="idle"][aria-current="true"]').waitFor();
    await page.evaluate(RECORD_MARKS);
    // Each raider.done's own time (epoch s on the bus), in order.
    const doneAt: number[] = [];
    sub.onEvent = (event) => {
      if (event.type === 'raider.done') doneAt.push(Number(event.time) * 1000);
    };
    const sentAt: number[] = [];
    const t0 = nowMs();
    for (let i = 0; i < LATENCY_S * 10; i++) {
      const wait = t0 + i * 100 - nowMs();
      if (wait > 0) await sleep(wait);
      sentAt.push(Date.now());
      // A run still on the slot queues the next mission (the reply has no run id then): it starts when that one ends.
      await client.command({ cmd: 'spawn', name: '1bjorn', mission: 'go' });
    }
    for (const deadline = nowMs() + 60_000; doneAt.length < sentAt.length; await sleep(50))
      if (nowMs() > deadline) throw new Error(`${doneAt.length} of ${sentAt.length} runs ended within 60 s`);
    // The last idle is marked after the last raider.done: wait for it, by the page's own record.
    const lastDone = doneAt.at(-1) ?? 0;
    for (const deadline = nowMs() + 10_000; nowMs() < deadline; await sleep(50)) {
      const marks = (await page.evaluate('window.marks')) as Array<[string, number]>;
      if (marks.some(([state, at]) => state === 'idle' && at >= lastDone - 5)) break;
    }
    const marks = (await page.evaluate('window.marks')) as Array<[string, number]>;
    client.close();
    sub.close();
    // Each mark against the newest event that can have caused it: the slot goes idle when a run ends
    // (a raider.done with nothing queued), busy when a mission comes to a free slot (a spawn sent).
    const newestBefore = (times: readonly number[], at: number) => times.filter((t) => t <= at + 5).at(-1);
    const idle: number[] = [];
    const busy: number[] = [];
    for (const [state, at] of marks) {
      const cause = newestBefore(state === 'idle' ? doneAt : sentAt, at);
      if (cause !== undefined && (state === 'idle' || state === 'busy')) (state === 'idle' ? idle : busy).push(at - cause);
    }
    return { idle, busy };
  } finally {
    await browser.close();
    await hall.stop();
  }
}

async function main(): Promise<void> {
  if (!CHROMIUM) throw new Error('no Chromium: install the chromium package or set CHROMIUM_PATH');
  const load = os.loadavg();
  const { idle, busy } = await latency();
  const loadAfter = os.loadavg();
  const idleStats = stats(idle);
  const busyStats = stats(busy);
  process.stdout.write(`# Statechart page bench\n\n${machine()}\n`);
  process.stdout.write(`load average before: ${load.map((l) => fmt(l)).join(' ')}, after: ${loadAfter.map((l) => fmt(l)).join(' ')}\n\n`);
  process.stdout.write(
    `${table(
      ['10 runs/s on slot 1bjorn, chart open', 'n', 'median ms', 'p90 ms', 'max ms'],
      [
        ['raider.done on the bus → idle marked', String(idle.length), fmt(idleStats.median), fmt(idleStats.p90), fmt(idleStats.max)],
        ['spawn sent → busy marked', String(busy.length), fmt(busyStats.median), fmt(busyStats.p90), fmt(busyStats.max)],
      ],
    )}\n\n`,
  );
  summary([
    {
      bench: 'statechart',
      metric: 'bus event → marked state, median ms',
      value: fmt(idleStats.median),
      target: '<= 100',
      met: idleStats.median <= 100,
    },
  ]);
}

runMain(main);
