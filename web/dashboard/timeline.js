// A run's timeline: its start and states (from its events file), then what
// the bus said about it: the spawn, the dashboard's cancel or kill, each
// signal the hall sent (SIGINT, SIGTERM after cancel_grace, SIGKILL) with its
// offset from the first one, and the end with its status and error.
import { h } from 'preact';
import htm from 'htm';
import { clockTime } from './format.js';

const html = htm.bind(h);

function text(value) {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The events of a run's page that belong on its timeline, oldest first. */
export function timelineEvents(detail) {
  return [...detail.events.filter((e) => e.type === 'run.started' || e.type === 'run.state'), ...detail.timeline]
    .filter((e) => typeof e.time === 'number')
    .sort((a, b) => a.time - b.time);
}

function line(event, firstSignal) {
  switch (event.type) {
    case 'run.started':
      return 'started';
    case 'run.state':
      return `state: ${text(event.state)}`;
    case 'raider.spawned':
      return `spawned (pid ${text(event.pid)})`;
    case 'dashboard.cancel':
      return 'cancel asked from the dashboard (SIGINT, then SIGTERM after the grace, then SIGKILL)';
    case 'dashboard.kill':
      return 'kill asked from the dashboard (SIGTERM, then SIGKILL after the grace)';
    case 'raider.signal': {
      const offset = event.time - firstSignal;
      return `${text(event.signal)} sent to pid ${text(event.pid)}${offset > 0 ? ` (+${offset.toFixed(2)} s)` : ''}`;
    }
    case 'raider.done':
      return `ended: ${text(event.status)}${event.error ? ` (${text(event.error)})` : ''}${event.hall_stop ? `; ${text(event.hall_stop)}` : ''}`;
    default:
      return text(event.type);
  }
}

export function Timeline({ detail }) {
  const events = timelineEvents(detail);
  const firstSignal = events.find((e) => e.type === 'raider.signal')?.time ?? 0;
  return html`<section aria-label="Timeline"><h3>Timeline</h3>
    <ol>${events.map((e) => html`<li class=${e.type === 'raider.signal' ? 'signal' : ''}><time>${clockTime(e.time * 1000)}</time> ${line(e, firstSignal)}</li>`)}</ol>
  </section>`;
}
