// A live actor's statechart (`#/actors/ID`, and a panel of a run's page):
// the machine as the build laid it out (/app/statecharts/KIND.svg, made by
// scripts/statechart-svg.ts), its current states marked `aria-current="true"`,
// and below it the actor's recent events. The actor is followed over its own
// event stream (/api/actors/stream?id=ID), one message per change, each
// marked at once rather than at the live feed's next hand-out.
import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { preciseTime } from './format.js';

const html = htm.bind(h);
/** Events the list shows at most (the hall sends the last 50, then each new one). */
const EVENTS_SHOWN = 200;

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

function EventRow({ e }) {
  return html`<li class=${e.dir}>
    <time>${preciseTime(e.time)}</time> ${e.dir === 'received' ? '←' : '→'} ${e.dir} <code>${e.event}</code>${
      e.peer !== undefined ? html` ${e.dir === 'received' ? 'from' : 'to'} <span class="peer">${e.peer}</span>` : null
    }
  </li>`;
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
    const source = new EventSource(`/api/actors/stream?id=${encodeURIComponent(id)}`);
    source.onmessage = (message) => {
      const m = JSON.parse(message.data);
      if (m.type === 'actor.snapshot' || m.type === 'actor.state') {
        seen = true;
        states.current = m.states;
        markStates(chartBox.current, m.states);
        setActor(m);
        if (m.type === 'actor.snapshot') setEvents(m.events);
      } else if (m.type === 'actor.event') setEvents((list) => [...list.slice(-(EVENTS_SHOWN - 1)), m]);
      else if (m.type === 'actor.stopped') {
        source.close();
        setEnded('The actor has ended: this is its last state.');
      }
    };
    source.onerror = () => {
      // The hall answers 404 for an actor it no longer has: the browser then gives up on the stream.
      if (source.readyState !== EventSource.CLOSED) return;
      if (!seen) setEnded(`No live actor ${id}: it has ended, or the hall has none of that id.`);
    };
    return () => source.close();
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
    ${events.length === 0 ? html`<p class="note">No events seen yet.</p>` : html`<ol aria-label=${`Events of ${id}`} class="actor-events">${events.map((e, i) => html`<${EventRow} key=${i} e=${e} />`)}</ol>`}
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
