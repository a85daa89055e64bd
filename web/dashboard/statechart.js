// A live actor's statechart (`#/actors/ID`, and a panel of a run's page):
// the machine as the build laid it out (/app/statecharts/KIND.svg, made by
// scripts/statechart-svg.ts), its current states marked `aria-current="true"`,
// and below it the actor's recent events. The actor is followed over its own
// event stream (/api/actors/stream?id=ID&batch=1), what changed in the hall's
// last few milliseconds in one message, marked at once rather than at the live
// feed's next hand-out.
import { Component, h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { preciseTime } from './format.js';

const html = htm.bind(h);
/** Events the list shows at most (the hall sends the last 50, then each new one). */
const EVENTS_SHOWN = 200;
/** The list is drawn again at most this often while events come (the chart's marks are not held back)... */
const EVENTS_EVERY_MS = 250;
/**
 * ...and at most this often after a draw of FLOOD events or more (a slot under
 * a burst of missions, a few events each): each draw of a hundred new rows
 * costs the browser ~10 ms of script, layout and paint, on the same cores as
 * the hall in a burst (bench/RESULTS.md, "The statechart burst").
 */
const FLOOD_EVERY_MS = 1000;
const FLOOD = 50;

/** The charts the page fetched, by machine id: one request per machine and page. */
const charts = new Map();

function chartOf(kind) {
  let chart = charts.get(kind);
  if (!chart) {
    chart = fetch(`/app/statecharts/${encodeURIComponent(kind)}.svg`, { credentials: 'same-origin' }).then((res) =>
      res.ok ? res.text() : null,
    );
    charts.set(kind, chart);
  }
  return chart;
}

/** Marks the states `states` names in the chart under `root`, and unmarks the others. */
function markStates(root, states) {
  if (!root) return;
  const current = new Set(states);
  for (const node of root.querySelectorAll('[data-state]')) {
    if (current.has(node.getAttribute('data-state'))) node.setAttribute('aria-current', 'true');
    else node.removeAttribute('aria-current');
  }
}

/** One event of the list, drawn once: an event never changes, and the list keys each by its number. */
class EventRow extends Component {
  shouldComponentUpdate(next) {
    return next.e !== this.props.e;
  }

  render({ e }) {
    return html`<li class=${e.dir}>
      <time>${preciseTime(e.time)}</time> ${e.dir === 'received' ? '←' : '→'} ${e.dir} <code>${e.event}</code>${
        e.peer !== undefined ? html` ${e.dir === 'received' ? 'from' : 'to'} <span class="peer">${e.peer}</span>` : null
      }
    </li>`;
  }
}

/**
 * The chart and events of the live actor `id`; `kind` draws the chart before
 * (or without) the actor's snapshot, for a run's page.
 */
export function ActorChart({ id, kind }) {
  const [actor, setActor] = useState(null);
  const [events, setEvents] = useState([]);
  const [ended, setEnded] = useState(null);
  const [svg, setSvg] = useState(null);
  const chartBox = useRef(null);
  const states = useRef([]);
  const shownKind = actor?.kind ?? kind;
  useEffect(() => {
    setActor(null);
    setEvents([]);
    setEnded(null);
    let seen = false;
    // Each event gets a number, the key of its row: a new event adds a row (and the oldest goes), not a new text in each.
    let numbered = 0;
    const number = (e) => ({ n: numbered++, e });
    // Events are shown at most every EVENTS_EVERY_MS (in a flood FLOOD_EVERY_MS), all that came meanwhile: a busy
    // actor (a slot under a burst) costs the page a render or a few a second, not one per event. States are marked at once.
    let pending = [];
    let timer = null;
    let shownAt = 0;
    let every = EVENTS_EVERY_MS;
    const showPending = () => {
      timer = null;
      shownAt = performance.now();
      const batch = pending;
      pending = [];
      every = batch.length >= FLOOD ? FLOOD_EVERY_MS : EVENTS_EVERY_MS;
      setEvents((list) => [...list, ...batch].slice(-EVENTS_SHOWN));
    };
    // Batched (`event: batch`, an array of the messages that came meanwhile): a busy actor is a few messages
    // a second for the browser, not one per event. Each state is marked in order; the text above the chart
    // is drawn once a batch, with its last state.
    const source = new EventSource(`/api/actors/stream?id=${encodeURIComponent(id)}&batch=1`);
    const take = (m) => {
      if (m.type === 'actor.snapshot' || m.type === 'actor.state') {
        seen = true;
        states.current = m.states;
        markStates(chartBox.current, m.states);
        if (m.type === 'actor.snapshot') {
          pending = [];
          setEvents(m.events.map(number));
        }
        return m;
      }
      if (m.type === 'actor.event') {
        pending.push(number(m));
        if (pending.length > EVENTS_SHOWN) pending.shift();
        timer ??= setTimeout(showPending, Math.max(0, shownAt + every - performance.now()));
      } else if (m.type === 'actor.stopped') {
        source.close();
        // Its last events are shown with its end, not up to EVENTS_EVERY_MS after.
        clearTimeout(timer);
        showPending();
        setEnded('The actor has ended: this is its last state.');
      }
      return null;
    };
    source.addEventListener('batch', (message) => {
      let state = null;
      for (const m of JSON.parse(message.data)) state = take(m) ?? state;
      if (state !== null) setActor(state);
    });
    source.onerror = () => {
      // The hall answers 404 for an actor it no longer has: the browser then gives up on the stream.
      if (source.readyState !== EventSource.CLOSED) return;
      if (!seen) setEnded(`No live actor ${id}: it has ended, or the hall has none of that id.`);
    };
    return () => {
      source.close();
      clearTimeout(timer);
    };
  }, [id]);
  useEffect(() => {
    if (shownKind === undefined) return undefined;
    let current = true;
    chartOf(shownKind).then((text) => current && setSvg(text ?? ''));
    return () => {
      current = false;
    };
  }, [shownKind]);
  // After the chart is drawn: the states known by then.
  useEffect(() => markStates(chartBox.current, states.current), [svg]);
  return html`<div class="actor-chart">
    <p>
      <strong>${id}</strong>${actor !== null ? html`: machine <code>${actor.kind}</code>, in <code class="current-state">${actor.state}</code> since ${preciseTime(actor.since)} (${actor.status})` : null}
    </p>
    ${ended !== null ? html`<p role="status" class="note">${ended}</p>` : null}
    ${
      svg === ''
        ? html`<p class="note">No statechart: ${id} runs no machine of the hall's (${shownKind}), or the build made none (npm run build). Its events are below.</p>`
        : html`<div role="region" aria-label=${`statechart of ${id}`} class="statechart-box" ref=${chartBox} dangerouslySetInnerHTML=${{ __html: svg ?? '' }}></div>`
    }
    <h3>Recent events</h3>
    ${events.length === 0 ? html`<p class="note">No events seen yet.</p>` : html`<ol aria-label=${`Events of ${id}`} class="actor-events">${events.map(({ n, e }) => html`<${EventRow} key=${n} e=${e} />`)}</ol>`}
  </div>`;
}

/** `#/actors/ID`: one actor's chart on a page of its own. */
export function StatechartPage({ id }) {
  return html`<main>
    <p><a href="#/tree">Tree</a></p>
    <h2>Statechart of ${id}</h2>
    <${ActorChart} id=${id} />
  </main>`;
}

/** A link to the statechart of the actor `id`. */
export function StatechartLink({ id }) {
  return html`<a class="statechart-link" href=${`#/actors/${encodeURIComponent(id)}`} aria-label=${`Statechart of ${id}`}>statechart</a>`;
}
