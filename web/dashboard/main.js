// The Raider Hall dashboard: Preact + htm, no build step. Everything from
// missions, output and names is rendered as text by Preact (never as HTML).
// Live events are queued and applied once per animation frame, so a busy bus
// costs one render a frame, not one per event.
import { Component, h, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { QuestionsRegion } from './questions.js';
import { WaitingList } from './waiting.js';
import { connectEvents, getJson, live, postJson, reportFailure, takeFirstData, useEvery, useJsonFollowing, useLiveBatch } from './live.js';
import { Timeline } from './timeline.js';
import { Conversation } from './conversation.js';
import { RunBranch } from './run-branch.js';
import { clockTime, preciseTime } from './format.js';
import { Nav, ViewPage, viewRoute } from './views.js';
import { HallsTable } from './cluster.js';
import { applyRunEvents, fillMissions, followsEvents, noteAnswer, noteMissions } from './runs-live.js';
import { ActorChart, StatechartLink } from './statechart.js';

const html = htm.bind(h);
const STATUSES = ['running', 'completed', 'failed', 'cancelled', 'interrupted'];
/** With a Status or Text filter, a busy bus asks the hall for the runs at most this often (the first change at once). */
const RUNS_LOOK_AGAIN_MS = 100;
/** Without: the events keep the table; what they cannot place is asked for at most this often. */
const FOLLOW_LOOK_AGAIN_MS = 1000;
/** Rows the events added lack their mission (the bus does not carry it): asked for at most this often. */
const MISSIONS_LOOK_MS = 1000;
/** A mission in the Runs table: its first characters (the whole text is the cell's title). */
const MISSION_SHOWN = 80;
const TITLE_MAX = 4000;

// ------------------------------------------------------------ formatting

function duration(row) {
  const seconds = row.duration ?? (Date.now() - row.started_at) / 1000;
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

function text(value) {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `text` of at most `max` characters, ending in `…` when cut. */
function cut(value, max) {
  const whole = text(value);
  return whole.length > max ? `${whole.slice(0, max - 1)}…` : whole;
}

/** A mission on one line: its head with whitespace folded, cut at `max`. */
function oneLine(value, max) {
  return cut(
    cut(value, max * 4)
      .replace(/\s+/g, ' ')
      .trim(),
    max,
  );
}

// ------------------------------------------------------------ runs page

/** The raiders `.raider-hall.yml` names: they came with the page; a later view asks. */
function useRaiderNames() {
  const [names, setNames] = useState(firstData.raiders ?? null);
  useEffect(() => {
    if (names === null)
      getJson('/api/raiders')
        .then((reply) => setNames(reply.raiders ?? []))
        .catch(reportFailure);
  }, []);
  return names ?? [];
}

function SpawnForm() {
  const names = useRaiderNames();
  const [raider, setRaider] = useState('');
  const [mission, setMission] = useState('');
  const [answer, setAnswer] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    try {
      setAnswer(await postJson('/api/spawn', { name: raider, mission }));
    } catch (err) {
      setAnswer({ error: String(err) });
    }
  };
  return html`<form aria-label="Spawn" class="spawn" onSubmit=${submit}>
    <label>Raider <input name="raider" list="raider-names" autocomplete="off" value=${raider} onInput=${(e) => setRaider(e.currentTarget.value)} /></label>
    <datalist id="raider-names">${names.map((name) => html`<option value=${name}></option>`)}</datalist>
    <label>Mission <textarea name="mission" rows="2" value=${mission} onInput=${(e) => setMission(e.currentTarget.value)}></textarea></label>
    <button type="submit">Spawn</button>
    ${
      answer?.error !== undefined
        ? html`<p role="alert" class="refusal">${text(answer.error)}</p>`
        : answer !== null
          ? html`<p role="status">${answer.id !== undefined ? html`Spawned <a href=${`#/runs/${encodeURIComponent(text(answer.id))}`}>${text(answer.id)}</a>` : `Queued (${text(answer.queue_depth ?? answer.status ?? 'waiting')})`}</p>`
          : null
    }
    ${answer?.notice !== undefined ? html`<p role="alert" class="notice">Note: ${text(answer.notice)}.</p>` : null}
  </form>`;
}

function Filters({ filter, setFilter }) {
  const set = (key) => (e) => setFilter({ ...filter, [key]: e.currentTarget.value });
  return html`<div class="filters" role="group" aria-label="Filters">
    <label>Raider filter <input value=${filter.raider} onInput=${set('raider')} /></label>
    <label>Status filter
      <select value=${filter.status} onChange=${set('status')}>
        <option value="">any</option>
        ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
      </select>
    </label>
    <label>Text filter <input value=${filter.text} onInput=${set('text')} /></label>
  </div>`;
}

/**
 * One row of the Runs table, drawn again only when its run changed (the
 * events give a changed run a new object, and leave the others as they were)
 * or, while it runs, when `now` moves its duration on: a burst of runs then
 * draws the rows that start and end, not the whole table each frame.
 */
class RunRow extends Component {
  shouldComponentUpdate(next) {
    const p = this.props;
    return next.row !== p.row || next.now !== p.now || next.readOnly !== p.readOnly || next.shared !== p.shared;
  }

  render({ row, readOnly, shared }) {
    const act = (verb) => () => postJson(`/api/runs/${encodeURIComponent(row.id)}/${verb}`, {}).catch(reportFailure);
    return html`<tr>
      <td><a href=${`#/runs/${encodeURIComponent(row.id)}`}>${row.id}</a></td>
      <td>${row.slot}</td>
      ${shared ? html`<td>${row.hall ?? ''}</td>` : null}
      <td class="mission-cell" title=${row.mission === undefined ? null : cut(row.mission, TITLE_MAX)}>${row.mission === undefined ? '' : oneLine(row.mission, MISSION_SHOWN)}</td>
      <td class=${`status ${row.status}`}>${row.status}</td>
      <td>${clockTime(row.started_at)}</td>
      <td>${duration(row)}</td>
      <td>
        ${
          row.status === 'running' && !readOnly
            ? html`<button type="button" aria-label=${`Cancel ${row.id}`} onClick=${act('cancel')}>Cancel</button>
              <button type="button" aria-label=${`Kill ${row.id}`} onClick=${act('kill')}>Kill</button>`
            : null
        }
      </td>
    </tr>`;
  }
}

/**
 * Epoch ms while `ticking`: what moves a running run's duration on. It moves
 * with each batch of events (drawn anyway) and a second after the last move:
 * in a burst the clock adds no drawing of its own.
 */
function useClock(ticking) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!ticking) return undefined;
    let timer = null;
    let waited = false;
    const tick = () => {
      clearTimeout(timer);
      waited = false;
      setNow(Date.now());
      timer = setTimeout(onTimer, 1000);
    };
    // While the feed polls, its hand-outs (about one a second) move the clock: a tick of its own just
    // before one would be a second render. It waits once for the poll's batch, not longer (a frozen
    // page or a poll that brought nothing hands out no batch).
    const onTimer = () => {
      if (live.polling && !waited) {
        waited = true;
        timer = setTimeout(onTimer, 500);
      } else tick();
    };
    timer = setTimeout(onTimer, 1000);
    live.listeners.add(tick);
    return () => {
      clearTimeout(timer);
      live.listeners.delete(tick);
    };
  }, [ticking]);
  return now;
}

function RunsPage({ readOnly, cluster }) {
  const shared = cluster?.shared === true;
  const [filter, setFilter] = useState({ raider: '', status: '', text: '' });
  // The page's first Runs view comes with it; a later one (back from another page) asks.
  const [first] = useState(() => {
    const runs = firstData.runs;
    firstData.runs = undefined;
    return runs;
  });
  const [runs, setRunsState] = useState(first ?? { runs: [], total: 0, limit: 50 });
  const answeredByPage = useRef(first !== undefined);
  // The table as last drawn, for the event listener (which runs outside renders).
  const shown = useRef(runs);
  // Missions the page learnt (the bus's dashboard.spawn, the hall's /api/missions), and the runs asked about.
  const known = useRef({ byMission: new Map(), byRun: new Map() });
  const toAsk = useRef(new Set());
  const asked = useRef(new Set());
  const askMissions = useEvery(MISSIONS_LOOK_MS, () => {
    const ids = [...toAsk.current].slice(0, 500);
    for (const id of ids) toAsk.current.delete(id);
    if (ids.length === 0) return;
    getJson(`/api/missions?ids=${ids.map(encodeURIComponent).join(',')}`)
      .then((reply) => {
        noteAnswer(reply, known.current);
        setRuns(shown.current);
      })
      .catch(reportFailure);
    if (toAsk.current.size > 0) askMissions();
  });
  const setRuns = (next) => {
    const filled = fillMissions(next, known.current);
    shown.current = filled.runs;
    setRunsState(filled.runs);
    if (asked.current.size > 5000) asked.current.clear();
    const fresh = filled.missing.filter((id) => !asked.current.has(id));
    for (const id of fresh) {
      asked.current.add(id);
      toAsk.current.add(id);
    }
    if (fresh.length > 0) askMissions();
  };
  // The events that came while a request for the runs was on its way: its answer may predate them.
  const sinceAsked = useRef(null);
  // Rows newer runs pushed off the table (runs-live.js): their end places them again.
  const pushedOut = useRef(new Map());
  const [frozen, setFrozen] = useState(false);
  const [stamp, setStamp] = useState(0);
  const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== '')).toString();
  useEffect(() => {
    // The first view needs no request: it came with the page.
    if (answeredByPage.current) {
      answeredByPage.current = false;
      return undefined;
    }
    let current = true;
    const missed = [];
    sinceAsked.current = missed;
    getJson(`/api/runs?${query}`)
      .then((reply) => {
        if (!current) return;
        if (sinceAsked.current === missed) sinceAsked.current = null;
        pushedOut.current.clear();
        setRuns(followsEvents(filter) ? applyRunEvents(reply, missed, filter, cluster?.hall, pushedOut.current).runs : reply);
      })
      .catch(reportFailure);
    return () => {
      current = false;
    };
  }, [query, stamp]);
  const lookAgain = useEvery(RUNS_LOOK_AGAIN_MS, () => setStamp((n) => n + 1));
  const lookAgainLater = useEvery(FOLLOW_LOOK_AGAIN_MS, () => setStamp((n) => n + 1));
  useLiveBatch(
    (batch) => {
      sinceAsked.current?.push(...batch);
      noteMissions(batch, known.current);
      if (!followsEvents(filter)) {
        if (batch.some((e) => typeof e.type === 'string' && (e.type.startsWith('raider.') || e.type.startsWith('hall.')))) lookAgain();
        return;
      }
      const next = applyRunEvents(shown.current, batch, filter, cluster?.hall, pushedOut.current);
      if (next.runs !== shown.current) setRuns(next.runs);
      if (next.lookAgain) lookAgainLater();
    },
    [filter, cluster],
  );
  const now = useClock(runs.runs.some((row) => row.status === 'running'));
  const [held, setHeld] = useState(0);
  useEffect(() => {
    live.heldListeners.add(setHeld);
    return () => live.heldListeners.delete(setHeld);
  }, []);
  const toggle = () => {
    live.setFrozen(!frozen);
    setFrozen(!frozen);
    setHeld(0);
  };
  return html`<main>
    ${readOnly ? html`<p class="note">Read-only dashboard.</p>` : html`<${SpawnForm} />`}
    <${HallsTable} cluster=${cluster} />
    <div class="bar">
      <${Filters} filter=${filter} setFilter=${setFilter} />
      <span>
        <button type="button" aria-pressed=${frozen ? 'true' : 'false'} onClick=${toggle}>Freeze</button>
        ${frozen ? html`<span role="status" class="note"> Frozen: ${held} updates held</span>` : null}
      </span>
    </div>
    <table aria-label="Runs" class="runs">
      <thead><tr><th class="w-run">Run</th><th class="w-name">Raider</th>${shared ? html`<th class="w-name">Hall</th>` : null}<th>Mission</th><th class="w-status">Status</th><th class="w-time">Started</th><th class="w-time">Duration</th><th class="w-actions">Actions</th></tr></thead>
      <tbody>
        ${runs.runs.map(
          (row) =>
            html`<${RunRow} key=${row.id} row=${row} now=${row.status === 'running' ? now : 0} readOnly=${readOnly} shared=${shared} />`,
        )}
      </tbody>
    </table>
    <p class="note">${runs.total} runs</p>
    <${WaitingList} readOnly=${readOnly} live=${live} />
  </main>`;
}

// ------------------------------------------------------------ a run's page

function RunPage({ id, readOnly }) {
  const [detail, lookAgain] = useJsonFollowing(`/api/runs/${encodeURIComponent(id)}`, (e) => e.id === id);
  const running = detail?.run?.status === 'running';
  // The run's actor lives only while it runs: its chart is shown from then on, and keeps its last state after.
  const [charted, setCharted] = useState(false);
  if (running && !charted) setCharted(true);
  // The raider's output goes to its events file, not the bus: while it runs, look again each second.
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(lookAgain, 1000);
    return () => clearInterval(timer);
  }, [running]);
  if (detail === null) return html`<main><p>Loading ${id}…</p></main>`;
  if (detail.error !== undefined) return html`<main><p role="alert">${text(detail.error)}</p><a href="#/">All runs</a></main>`;
  // The run's lines of its slot log: a raider that fails before its first event says why only there.
  const log = detail.log ?? [];
  const act = (verb) => () =>
    postJson(`/api/runs/${encodeURIComponent(id)}/${verb}`, {})
      .then(lookAgain)
      .catch(reportFailure);
  return html`<main>
    <p><a href="#/">All runs</a></p>
    <h2>Run ${id}</h2>
    <dl>
      <dt>Raider</dt><dd>${detail.run.slot}</dd>
      <dt>Status</dt><dd class=${`status ${detail.run.status}`}>${detail.run.status}</dd>
      <dt>Started</dt><dd>${preciseTime(detail.run.started_at)}</dd>
      ${detail.run.ended_at !== undefined ? html`<dt>Ended</dt><dd>${preciseTime(detail.run.ended_at)}</dd><dt>Duration</dt><dd>${detail.run.duration.toFixed(3)} s</dd>` : null}
      ${detail.run.error !== undefined ? html`<dt>Error</dt><dd>${text(detail.run.error)}</dd>` : null}
    </dl>
    ${
      running && !readOnly
        ? html`<p><button type="button" aria-label=${`Cancel ${id}`} onClick=${act('cancel')}>Cancel</button>
          <button type="button" aria-label=${`Kill ${id}`} onClick=${act('kill')}>Kill</button></p>`
        : null
    }
    ${
      charted
        ? html`<section aria-label="Run statechart"><h3>Statechart <${StatechartLink} id=${`run:${id}`} /></h3><${ActorChart} id=${`run:${id}`} kind="run" /></section>`
        : null
    }
    <${RunBranch} id=${id} branch=${detail.branch} />
    <section aria-label="Output"><h3>Output</h3>
      <${Conversation} detail=${detail} />
      ${log.length > 0 ? html`<h4>Slot log</h4><pre class="log">${log.join('\n')}</pre>` : null}
    </section>
    <${Timeline} detail=${detail} />
  </main>`;
}

// ------------------------------------------------------------ shell

function currentRoute() {
  const view = viewRoute(location.hash);
  if (view) return view;
  const m = /^#\/runs\/(.+)$/.exec(location.hash);
  return m ? { page: 'run', id: decodeURIComponent(m[1]) } : { page: 'runs' };
}

function App() {
  const [route, setRoute] = useState(currentRoute());
  const [status, setStatus] = useState(firstData.status ?? null);
  const [cluster, setCluster] = useState(firstData.cluster ?? null);
  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    // The hash may have changed between the first render and this effect (Preact runs it after a paint): no event tells of that.
    onHash();
    if (firstData.status === undefined) getJson('/api/status').then(setStatus).catch(reportFailure);
    if (firstData.cluster === undefined) getJson('/api/cluster').then(setCluster).catch(reportFailure);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  if (status === null) return html`<p>Loading…</p>`;
  const readOnly = status.dashboard?.read_only === true;
  // The hall counts open questions in status only when dashboard.questions is on.
  const questionsOn = typeof status.dashboard?.questions === 'number';
  return html`<header><h1>Raider Hall</h1><${Nav} route=${route} /><span class="root">${text(status.root)}</span></header>
    ${questionsOn ? html`<${QuestionsRegion} readOnly=${readOnly} live=${live} />` : null}
    ${
      route.page === 'run'
        ? html`<${RunPage} id=${route.id} readOnly=${readOnly} />`
        : route.page === 'runs'
          ? html`<${RunsPage} readOnly=${readOnly} cluster=${cluster} />`
          : html`<${ViewPage} route=${route} readOnly=${readOnly} cluster=${cluster} />`
    }`;
}

const firstData = takeFirstData();
connectEvents(firstData.seq);
render(html`<${App} />`, document.getElementById('app'));
