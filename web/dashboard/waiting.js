// The Waiting list: every mission that waits in a numbered slot's queue or a
// binding's queue, in the order it will start, with Drop and Move to front.
// Missions are rendered as text by Preact (never as HTML).
import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { getJson, postJson, useEvery } from './live.js';

const html = htm.bind(h);

/** Bus events after which what waits has changed. */
const QUEUE_EVENTS = /^(raider\.(queued|dropped|moved|refused|resync)|hall\.)/;
/** Runs that start and end change what waits only when something waits: a burst on a plain slot asks nothing. */
const RUN_EVENTS = /^raider\.(spawned|done)$/;
/** A busy bus asks the hall for the queues at most this often (the first change at once). */
const LOOK_AGAIN_MS = 100;

function age(seconds) {
  if (seconds === undefined) return 'age unknown';
  const s = Math.max(0, Math.floor(seconds));
  return s < 60
    ? `${s} s`
    : s < 3600
      ? `${Math.floor(s / 60)} min ${s % 60} s`
      : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** The queue reply as one list, queue by queue, each in its order. */
function flatten(reply) {
  const rows = [];
  for (const queue of reply.queues ?? []) {
    const where = queue.slot !== undefined ? `slot ${queue.slot}` : `binding ${queue.binding}`;
    for (const m of queue.missions) rows.push({ ...m, where });
  }
  return rows;
}

/**
 * `live` is the page's batched event feed (main.js): its listeners get the
 * bus events of one animation frame at a time.
 */
export function WaitingList({ readOnly, live }) {
  const [reply, setReply] = useState({ queues: [], at: Date.now() });
  const [stamp, setStamp] = useState(0);
  const [now, setNow] = useState(Date.now());
  const [problem, setProblem] = useState(null);
  // While a request is on its way, or something waits, a run's start or end may change the list.
  const watchRuns = useRef(true);
  useEffect(() => {
    let current = true;
    watchRuns.current = true;
    getJson('/api/queue')
      .then((r) => {
        if (!current) return;
        watchRuns.current = flatten(r).length > 0;
        setReply({ ...r, at: Date.now() });
      })
      .catch((err) => current && setProblem(String(err)));
    return () => {
      current = false;
    };
  }, [stamp]);
  const lookAgain = useEvery(LOOK_AGAIN_MS, () => setStamp((n) => n + 1));
  useEffect(() => {
    const listen = (batch) => {
      const changes = (e) => typeof e.type === 'string' && (QUEUE_EVENTS.test(e.type) || (watchRuns.current && RUN_EVENTS.test(e.type)));
      if (batch.some(changes)) lookAgain();
    };
    live.listeners.add(listen);
    return () => live.listeners.delete(listen);
  }, [live]);
  const rows = flatten(reply);
  // Ages go on between loads; no timer while nothing waits.
  useEffect(() => {
    if (rows.length === 0) return undefined;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [rows.length > 0]);
  const act = (id, verb) => () =>
    postJson(`/api/queue/${encodeURIComponent(id)}/${verb}`, {})
      .then((answer) => {
        setProblem(answer.error !== undefined ? String(answer.error) : null);
        setStamp((n) => n + 1);
      })
      .catch((err) => setProblem(String(err)));
  const elapsed = (now - reply.at) / 1000;
  return html`<section class="waiting">
    <h2 id="waiting-title">Waiting</h2>
    ${problem !== null ? html`<p role="alert" class="refusal">${problem}</p>` : null}
    <ol aria-label="Waiting">
      ${rows.map(
        (m) => html`<li key=${m.mission_id}>
          <span class="where">${m.where}</span>
          <span class="position">#${m.position}</span>
          <span class="age">${age(m.age === undefined ? undefined : m.age + elapsed)}</span>
          <span class="mission">${m.mission}</span>
          <code class="id">${m.mission_id}</code>
          ${
            readOnly
              ? null
              : html`<button type="button" aria-label=${`Drop ${m.mission_id}`} onClick=${act(m.mission_id, 'drop')}>Drop</button>
                <button
                  type="button"
                  aria-label=${`Move to front ${m.mission_id}`}
                  disabled=${m.position === 1}
                  onClick=${act(m.mission_id, 'front')}
                >Move to front</button>`
          }
        </li>`,
      )}
    </ol>
    ${rows.length === 0 ? html`<p class="note">Nothing waits.</p>` : null}
  </section>`;
}
