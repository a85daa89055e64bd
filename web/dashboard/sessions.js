// Sessions: the bindings with the session each continues, every journal the
// hall's raiders keep, and one journal read line by line (messages, tool
// calls and results, permission decisions). All of it is text, never HTML.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';
import { dateTime } from './format.js';
import { getJson, reportFailure, useJsonFollowing, useLiveBatch } from './live.js';

const html = htm.bind(h);
/** A tool result can be a whole file: the page shows its start. */
const RESULT_SHOWN = 2000;

function text(value) {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function when(ms) {
  return ms === undefined ? '' : dateTime(ms);
}

const sessionLink = (id) => html`<a href=${`#/sessions/${encodeURIComponent(id)}`}>${id}</a>`;

export function SessionsPage() {
  const [view, setView] = useState(null);
  const [stamp, setStamp] = useState(0);
  useEffect(() => {
    let current = true;
    getJson('/api/sessions')
      .then((reply) => current && setView(reply))
      .catch(reportFailure);
    return () => {
      current = false;
    };
  }, [stamp]);
  // A binding gets a session, forgets one, or a run writes to a journal.
  useLiveBatch((batch) => {
    if (batch.some((e) => e.type === 'session.bound' || e.type === 'session.reset' || e.type === 'raider.done')) setStamp((n) => n + 1);
  }, []);
  if (view === null) return html`<main><p>Loading sessions…</p></main>`;
  return html`<main>
    <section aria-label="Sessions">
      <h2>Sessions</h2>
      <table aria-label="Bindings">
        <caption>Bindings and the session each continues</caption>
        <thead><tr><th>Binding</th><th>Session</th><th>Last used</th></tr></thead>
        <tbody>${view.bindings.map(
          (b) => html`<tr key=${b.binding}><td>${b.binding}</td><td>${sessionLink(b.session)}</td><td>${when(b.last_used)}</td></tr>`,
        )}</tbody>
      </table>
      ${view.bindings.length === 0 ? html`<p class="note">No binding has a session yet.</p>` : null}
      <table aria-label="Journals">
        <caption>Every session journal, newest first</caption>
        <thead><tr><th>Session</th><th>Binding</th><th>Last used</th><th>Size</th></tr></thead>
        <tbody>${view.journals.map(
          (j) =>
            html`<tr key=${j.session}><td>${sessionLink(j.session)}</td><td>${j.binding ?? ''}</td><td>${when(j.last_used)}</td><td>${Math.ceil(j.bytes / 1024)} KiB</td></tr>`,
        )}</tbody>
      </table>
    </section>
  </main>`;
}

/** One journal line as the page shows it: a kind (for its style) and its text; null for lines not shown. */
export function journalLine(entry) {
  const run = entry.run ? `[${text(entry.run)}] ` : '';
  switch (entry.type) {
    case 'session.created':
      return { kind: 'meta', line: `session created${entry.principal ? ` by ${text(entry.principal)}` : ''}` };
    case 'run.started':
      return { kind: 'meta', line: `${run}run started (${text(entry.engine)}${entry.model ? ` ${text(entry.model)}` : ''})` };
    case 'message':
      return { kind: entry.role === 'user' ? 'user' : 'assistant', line: `${run}${text(entry.role)}: ${text(entry.content)}` };
    case 'tool.call':
      return { kind: 'tool', line: `${run}→ ${text(entry.name)} ${text(entry.arguments)}` };
    case 'tool.result': {
      const content = text(entry.content);
      const shown = content.length > RESULT_SHOWN ? `${content.slice(0, RESULT_SHOWN)}… (${content.length} characters)` : content;
      return { kind: 'tool', line: `${run}← ${text(entry.name)} ${entry.ok === false ? 'failed' : 'ok'}: ${shown}` };
    }
    case 'permission':
      return {
        kind: 'grant',
        line: `${run}permission ${text(entry.decision)}: ${text(entry.name)}${entry.rule ? ` (${text(entry.rule)})` : ''}${entry.asked ? `, asked, answer ${text(entry.answer ?? 'no')}` : ''}: ${text(entry.reason)}`,
      };
    case 'run.finished':
      return { kind: 'meta', line: `${run}run ${text(entry.status)}${entry.error ? `: ${text(entry.error)}` : ''}` };
    default:
      return null;
  }
}

export function SessionPage({ id }) {
  // A run of this session ended: its lines are in the journal now.
  const [journal] = useJsonFollowing(`/api/sessions/${encodeURIComponent(id)}`, (e) => e.type === 'raider.done' && e.session === id);
  if (journal === null) return html`<main><p>Loading session ${id}…</p></main>`;
  if (journal.error !== undefined)
    return html`<main><p role="alert">${text(journal.error)}</p><a href="#/sessions">All sessions</a></main>`;
  const lines = journal.entries.map(journalLine).filter((l) => l !== null);
  return html`<main>
    <p><a href="#/sessions">All sessions</a></p>
    <h2>Session ${id}</h2>
    ${journal.binding ? html`<p>Continued by binding <strong>${journal.binding}</strong></p>` : null}
    ${journal.truncated ? html`<p class="note">Only the newest part of this journal is shown.</p>` : null}
    <section aria-label="Journal"><h3>Journal</h3>
      <ol class="journal">${lines.map((l) => html`<li class=${l.kind}><pre>${l.line}</pre></li>`)}</ol>
    </section>
  </main>`;
}
