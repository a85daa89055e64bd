// Charts (uPlot, served by the hall): runs per minute by outcome, durations
// per raider (median and p90), queue depth over time, runs by outcome, queue
// wait per slot (median and p90), and tokens and cost per raider per day. The figures come from
// /api/charts (the events files and the queue samples, so a restart keeps
// them); the bus only says when to look again, at most every LOOK_AGAIN_MS,
// and uPlot draws on a canvas once per change, never once per event.
import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { getJson, reportFailure, useLiveBatch } from './live.js';
import { nameAxis, TIME_LABEL_SPACE } from './chart-axes.js';

const html = htm.bind(h);
const LOOK_AGAIN_MS = 2000;
const HEIGHT = 220;
const COLORS = { completed: '#2f8f2f', failed: '#c03030', cancelled: '#b07a10', interrupted: '#6a4fb0', other: '#7a7a7a' };
const OUTCOMES = ['completed', 'failed', 'cancelled', 'interrupted', 'other'];
/** The y axis and its label take about this much of a chart's width. */
const Y_AXIS_PX = 70;
const timeAxis = { space: TIME_LABEL_SPACE };

/** uPlot is loaded with the charts page only: the other pages do not pay for it. */
let uPlotModule = null;
function loadUPlot() {
  uPlotModule ??= import('uplot').then((m) => m.default);
  return uPlotModule;
}

function widthOf(el) {
  return Math.max(320, Math.min(1100, el.clientWidth || 640));
}

/** One uPlot chart in a figure: made once, then given new data. */
function Chart({ label, make, data }) {
  const box = useRef(null);
  const plot = useRef(null);
  useEffect(() => {
    let gone = false;
    loadUPlot()
      .then((uPlot) => {
        if (gone || box.current === null) return;
        const { opts, columns } = make(uPlot, data, widthOf(box.current));
        if (plot.current) plot.current.destroy();
        plot.current = new uPlot(opts, columns, box.current);
      })
      .catch(reportFailure);
    return () => {
      gone = true;
    };
  }, [data]);
  useEffect(
    () => () => {
      plot.current?.destroy();
      plot.current = null;
    },
    [],
  );
  return html`<figure aria-label=${label} class="chart"><figcaption>${label}</figcaption><div ref=${box}></div></figure>`;
}

/** The whole window on the x axis, however few points it has (uPlot would otherwise stretch one point over years). */
function windowScale(data) {
  const from = data.from / 1000;
  const to = Math.max(from + 60, Date.now() / 1000 + 60);
  return { time: true, range: () => [from, to] };
}

/** Counts and seconds start at 0, with some room above the highest value. */
const fromZero = { range: (_u, _min, max) => [0, Math.max(1, max ?? 1) * 1.1] };

function runsPerMinute(uPlot, data, width) {
  const r = data.runs_per_minute;
  const used = OUTCOMES.filter((o) => r[o].some((n) => n > 0));
  const shown = used.length > 0 ? used : ['completed'];
  return {
    opts: {
      width,
      height: HEIGHT,
      scales: { x: windowScale(data), y: fromZero },
      series: [
        {},
        ...shown.map((o) => ({ label: o, stroke: COLORS[o], fill: `${COLORS[o]}55`, paths: uPlot.paths.bars({ size: [0.8, 12, 3] }) })),
      ],
      axes: [timeAxis, { label: 'runs' }],
    },
    columns: [r.minute, ...shown.map((o) => r[o])],
  };
}

/** Median and p90 bars per name: `rows` of {median, p90} and the name of each under `key`. */
function spreadBars(uPlot, rows, key, width) {
  const axis = nameAxis(
    rows.map((d) => d[key]),
    width - Y_AXIS_PX,
  );
  return {
    opts: {
      width,
      height: HEIGHT,
      scales: {
        x: { time: false, range: [-0.5, Math.max(0.5, rows.length - 0.5)] },
        y: { range: (_u, _min, max) => [0, Math.max(0.1, max ?? 0.1) * 1.1] },
      },
      series: [
        {},
        { label: 'median s', stroke: '#2f6b9f', fill: '#2f6b9f55', paths: uPlot.paths.bars({ size: [0.35, 60], align: -1 }) },
        { label: 'p90 s', stroke: '#a0522d', fill: '#a0522d55', paths: uPlot.paths.bars({ size: [0.35, 60], align: 1 }) },
      ],
      axes: [
        {
          values: (_u, splits) => splits.map((i) => (Number.isInteger(i) && i % axis.every === 0 ? (axis.labels[i] ?? '') : '')),
          splits: () => axis.labels.map((_n, i) => i),
          rotate: axis.rotate,
          size: axis.size,
        },
        { label: 'seconds' },
      ],
    },
    columns: [rows.map((_d, i) => i), rows.map((d) => d.median), rows.map((d) => d.p90)],
  };
}

const durations = (uPlot, data, width) => spreadBars(uPlot, data.durations, 'raider', width);
const queueWait = (uPlot, data, width) => spreadBars(uPlot, data.queue_wait, 'slot', width);

/** Runs that ended in the window, one bar per outcome. */
function outcomeBars(uPlot, data, width) {
  return {
    opts: {
      width,
      height: HEIGHT,
      scales: { x: { time: false, range: [-0.5, OUTCOMES.length - 0.5] }, y: fromZero },
      series: [{}, { label: 'runs', stroke: '#2f6b9f', fill: '#2f6b9f55', paths: uPlot.paths.bars({ size: [0.6, 80] }) }],
      axes: [{ values: (_u, splits) => splits.map((i) => OUTCOMES[i] ?? ''), splits: () => OUTCOMES.map((_o, i) => i) }, { label: 'runs' }],
    },
    columns: [OUTCOMES.map((_o, i) => i), OUTCOMES.map((o) => data.outcomes[o])],
  };
}

/** Tokens per day, one series per raider that reported usage. */
function tokensPerDay(uPlot, data, width) {
  const days = [...new Set(data.usage.map((u) => u.day))];
  const raiders = [...new Set(data.usage.filter((u) => u.reported > 0).map((u) => u.raider))];
  const shown = raiders.length > 0 ? raiders : [''];
  const palette = ['#2f6b9f', '#a0522d', '#2f8f2f', '#6a4fb0', '#b07a10', '#7a7a7a'];
  const n = shown.length;
  return {
    opts: {
      width,
      height: HEIGHT,
      scales: { x: { time: false, range: [-0.5, Math.max(0.5, days.length - 0.5)] }, y: fromZero },
      series: [
        {},
        ...shown.map((raider, i) => ({
          label: raider || 'tokens',
          stroke: palette[i % palette.length],
          fill: `${palette[i % palette.length]}55`,
          paths: uPlot.paths.bars({ size: [0.8 / n, 60], align: n === 1 ? 0 : i < n / 2 ? -1 : 1 }),
        })),
      ],
      axes: [{ values: (_u, splits) => splits.map((i) => days[i] ?? ''), splits: () => days.map((_d, i) => i) }, { label: 'tokens' }],
    },
    columns: [
      days.map((_d, i) => i),
      ...shown.map((raider) => days.map((day) => data.usage.find((u) => u.day === day && u.raider === raider)?.tokens ?? 0)),
    ],
  };
}

/** A currency map as text: `0.0123 USD, 1.5 EUR`. */
function costText(cost) {
  const parts = Object.entries(cost).map(([currency, amount]) => `${amount.toFixed(4)} ${currency}`);
  return parts.length > 0 ? parts.join(', ') : '—';
}

function queueDepth(uPlot, data, width) {
  const q = data.queue_depth;
  // A step holds its value until the next sample; the last one holds until now.
  const now = Date.now() / 1000;
  const time = q.time.length > 0 ? [...q.time, now] : [data.from / 1000, now];
  const depth = q.depth.length > 0 ? [...q.depth, q.depth.at(-1)] : [0, 0];
  return {
    opts: {
      width,
      height: HEIGHT,
      scales: { x: windowScale(data), y: fromZero },
      series: [{}, { label: 'waiting', stroke: '#7a3b12', fill: '#7a3b1233', paths: uPlot.paths.stepped({ align: 1 }) }],
      axes: [timeAxis, { label: 'missions' }],
    },
    columns: [time, depth],
  };
}

export function ChartsPage() {
  const [data, setData] = useState(null);
  const [stamp, setStamp] = useState(0);
  const last = useRef(0);
  const pending = useRef(false);
  useEffect(() => {
    let current = true;
    last.current = Date.now();
    getJson('/api/charts')
      .then((reply) => current && setData(reply))
      .catch(reportFailure);
    return () => {
      current = false;
    };
  }, [stamp]);
  // A busy bus asks for the figures again at most every LOOK_AGAIN_MS.
  useLiveBatch((batch) => {
    if (pending.current || !batch.some((e) => typeof e.type === 'string' && e.type.startsWith('raider.'))) return;
    pending.current = true;
    setTimeout(
      () => {
        pending.current = false;
        setStamp((n) => n + 1);
      },
      Math.max(0, LOOK_AGAIN_MS - (Date.now() - last.current)),
    );
  }, []);
  if (data === null) return html`<main><p>Loading charts…</p></main>`;
  const total = OUTCOMES.reduce((sum, o) => sum + data.runs_per_minute[o].reduce((a, b) => a + b, 0), 0);
  return html`<main>
    <section aria-label="Charts" class="charts">
      <h2>The last ${data.minutes / 60} hours</h2>
      <p class="note">${total} runs ended in this window.</p>
      <${Chart} label="Runs per minute" make=${runsPerMinute} data=${data} />
      <${Chart} label="Durations per raider" make=${durations} data=${data} />
      <table aria-label="Durations">
        <thead><tr><th>Raider</th><th>Runs</th><th>Median</th><th>p90</th></tr></thead>
        <tbody>${data.durations.map((d) => html`<tr key=${d.raider}><td>${d.raider}</td><td>${d.runs}</td><td>${d.median.toFixed(2)} s</td><td>${d.p90.toFixed(2)} s</td></tr>`)}</tbody>
      </table>
      <${Chart} label="Queue depth" make=${queueDepth} data=${data} />
      <${Chart} label="Runs by outcome" make=${outcomeBars} data=${data} />
      <table aria-label="Outcomes">
        <thead><tr>${OUTCOMES.map((o) => html`<th>${o}</th>`)}</tr></thead>
        <tbody><tr>${OUTCOMES.map((o) => html`<td>${data.outcomes[o]}</td>`)}</tr></tbody>
      </table>
      <${Chart} label="Queue wait per slot" make=${queueWait} data=${data} />
      <table aria-label="Queue wait">
        <caption>From a mission's raider.queued to its run's raider.spawned; missions that started at once are not counted.</caption>
        <thead><tr><th>Slot</th><th>Runs that waited</th><th>Median</th><th>p90</th></tr></thead>
        <tbody>${data.queue_wait.map((w) => html`<tr key=${w.slot}><td>${w.slot}</td><td>${w.runs}</td><td>${w.median.toFixed(2)} s</td><td>${w.p90.toFixed(2)} s</td></tr>`)}</tbody>
      </table>
      <h2>Usage, the last ${data.days} days</h2>
      <${Chart} label="Tokens per day" make=${tokensPerDay} data=${data} />
      <table aria-label="Usage per day">
        <caption>Per UTC day and raider: the context each run used at its end, summed, and its cost, as the agents report them.</caption>
        <thead><tr><th>Day</th><th>Raider</th><th>Runs</th><th>Reported usage</th><th>Tokens</th><th>Cost</th></tr></thead>
        <tbody>${data.usage.map((u) => html`<tr key=${`${u.day} ${u.raider}`}><td>${u.day}</td><td>${u.raider}</td><td>${u.runs}</td><td>${u.reported}</td><td>${u.tokens}</td><td>${costText(u.cost)}</td></tr>`)}</tbody>
      </table>
    </section>
  </main>`;
}
