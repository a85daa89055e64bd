// The Questions region (dashboard.questions: true): each open permission
// question of a run that no ACP client watches, with what the raider wants
// to do, the rule `Allow for session` would add, a countdown to the
// automatic `no`, and the three answers. The first answer from any face
// wins; a late one shows why it was refused. Everything is text, never HTML.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';
import { getJson, postJson } from './live.js';

const html = htm.bind(h);

function inputText(input) {
  const command = input?.command;
  return typeof command === 'string' && Object.keys(input).length === 1 ? command : JSON.stringify(input);
}

function Question({ q, now, readOnly, onAnswered }) {
  const [problem, setProblem] = useState(null);
  const left = Math.max(0, Math.ceil((q.deadline - now) / 1000));
  const answer = (value) => () =>
    postJson(`/api/questions/${encodeURIComponent(q.key)}/answer`, { answer: value })
      .then((reply) => {
        if (reply.error !== undefined) setProblem(String(reply.error));
        else onAnswered();
      })
      .catch((err) => setProblem(String(err)));
  return html`<article class="question">
    <h3>${q.title}</h3>
    <dl>
      <dt>Run</dt><dd><a href=${`#/runs/${encodeURIComponent(q.run)}`}>${q.run}</a></dd>
      <dt>Tool</dt><dd>${q.tool}</dd>
      <dt>Input</dt><dd><code>${inputText(q.input)}</code></dd>
      ${q.reason ? html`<dt>Why asked</dt><dd>${q.reason}</dd>` : null}
      <dt>For the session</dt><dd>${q.rule !== undefined ? html`<code>${q.rule}</code>` : '(no rule: only once or no)'}</dd>
    </dl>
    <p class="countdown" role="timer">Refused automatically in ${left} s</p>
    ${problem !== null ? html`<p role="alert" class="refusal">${problem}</p>` : null}
    ${
      readOnly
        ? null
        : html`<p>
          <button type="button" onClick=${answer('once')}>Allow once</button>
          <button type="button" disabled=${q.rule === undefined} onClick=${answer('session')}>Allow for session</button>
          <button type="button" onClick=${answer('no')}>Refuse</button>
        </p>`
    }
  </article>`;
}

/** `live` is the page's batched event feed (main.js). */
export function QuestionsRegion({ readOnly, live }) {
  const [questions, setQuestions] = useState([]);
  const [stamp, setStamp] = useState(0);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    let current = true;
    getJson('/api/questions')
      .then((reply) => {
        if (!current) return;
        setQuestions(reply.questions ?? []);
        // The clock only ticks while questions are open: start it from now.
        setNow(Date.now());
      })
      .catch((err) => console.warn(`dashboard: ${err}`));
    return () => {
      current = false;
    };
  }, [stamp]);
  useEffect(() => {
    const listen = (batch) => {
      if (batch.some((e) => typeof e.type === 'string' && (e.type.startsWith('permission.') || e.type === 'raider.resync')))
        setStamp((n) => n + 1);
    };
    live.listeners.add(listen);
    return () => live.listeners.delete(listen);
  }, [live]);
  useEffect(() => {
    if (questions.length === 0) return undefined;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [questions.length > 0]);
  return html`<section aria-label="Questions" class="questions">
    <h2>Questions</h2>
    ${
      questions.length === 0
        ? html`<p class="note">No raider is asking.</p>`
        : questions.map(
            (q) => html`<${Question} key=${q.key} q=${q} now=${now} readOnly=${readOnly} onAnswered=${() => setStamp((n) => n + 1)} />`,
          )
    }
  </section>`;
}
