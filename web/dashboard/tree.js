// The live supervision tree: the hall → its slots and binding queues → the
// running run and the waiting missions (in the order they will start) → the
// run's open permission questions; beside them the cron jobs with their next
// times, the Telegram bots with their poll health, and the ACP face.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';
import { getJson, reportFailure, useLiveBatch } from './live.js';
import { HallsTable } from './cluster.js';
import { clockTime, dateTime } from './format.js';
import { StatechartLink } from './statechart.js';

const html = htm.bind(h);
/** Ages and next times move on without events: look again this often. */
const REFRESH_MS = 5000;
const LIVE_PREFIXES = ['raider.', 'permission.', 'cron.', 'telegram.', 'session.', 'acp.', 'dashboard.'];

function text(value) {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function age(seconds) {
  if (seconds === undefined) return '';
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

function Question({ q }) {
  return html`<li class="question">question ${text(q.question ?? '')}: ${text(q.title ?? q.tool ?? '')}</li>`;
}

/** The statechart link of `id` when the hall has such a live actor (another hall's run has none here). */
function ChartOf({ id, live }) {
  return live.has(id) ? html`<${StatechartLink} id=${id} />` : null;
}

// A run's chart is on its page and in the Actors list: a second link here would carry its id in its name too.
function Run({ run }) {
  return html`<li>
    <span class="status running">running</span> <a href=${`#/runs/${encodeURIComponent(run.id)}`}>${run.id}</a>
    (${run.hall !== undefined ? `on ${run.hall}, ` : ''}pid ${run.pid}, ${age(run.age)}): <span class="mission">${run.mission}</span>
    ${run.questions.length > 0 ? html`<ul aria-label=${`Questions of ${run.id}`}>${run.questions.map((q) => html`<${Question} q=${q} />`)}</ul>` : null}
  </li>`;
}

function Queue({ queue, live }) {
  return html`<li>
    <strong>${queue.kind} ${queue.name}</strong><${ChartOf} id=${`${queue.kind}:${queue.name}`} live=${live} />
    <ul aria-label=${`${queue.kind} ${queue.name}`}>
      ${queue.runs.map((run) => html`<${Run} key=${run.id} run=${run} />`)}
      ${queue.waiting.map(
        (m) =>
          html`<li key=${m.mission_id}>waiting #${m.position} (${age(m.age)}, ${m.name}): <span class="mission">${m.mission}</span></li>`,
      )}
    </ul>
  </li>`;
}

function Faces({ tree }) {
  return html`
    <h3>Cron jobs</h3>
    ${
      tree.cron.length === 0
        ? html`<p class="note">No cron jobs.</p>`
        : html`<ul aria-label="Cron jobs">${tree.cron.map(
            (job) =>
              html`<li key=${job.id}>${job.id} → ${text(job.name)} (${text(job.cron)}): ${text(job.state)}, next ${job.next ? dateTime(job.next) : 'none'}</li>`,
          )}</ul>`
    }
    <h3>Telegram bots</h3>
    ${
      tree.telegram.length === 0
        ? html`<p class="note">No Telegram bots.</p>`
        : html`<ul aria-label="Telegram bots">${tree.telegram.map(
            (bot) =>
              html`<li key=${bot.bot}>${bot.bot}: ${text(bot.state)}${bot.failures ? `, ${bot.failures} failures in a row` : ''}${bot.last_ok ? `, last answer ${clockTime(bot.last_ok)}` : ''}${bot.last_error ? `, last error: ${text(bot.last_error.error)}` : ''}</li>`,
          )}</ul>`
    }
    <h3>ACP</h3>
    ${tree.acp === null ? html`<p class="note">No ACP face.</p>` : html`<p>ACP: ${text(tree.acp.sessions)} sessions${tree.acp.port ? ` (TCP ${text(tree.acp.host)}:${text(tree.acp.port)})` : ''}</p>`}
  `;
}

/**
 * Every live actor of the hall, as the inspection sees them, each with its
 * statechart page (an actor that runs no machine, a run's process say, shows
 * its events there).
 */
function Actors({ actors }) {
  return html`<h3>Actors</h3>
    <ul aria-label="Actors" class="actors">
      ${actors.map(
        (a) =>
          html`<li key=${a.id}><code>${a.id}</code> (${a.kind})${a.state === '' ? '' : `: ${a.state}`}<${StatechartLink} id=${a.id} /></li>`,
      )}
    </ul>`;
}

export function TreePage({ cluster }) {
  const [tree, setTree] = useState(null);
  const [stamp, setStamp] = useState(0);
  useEffect(() => {
    let current = true;
    getJson('/api/tree')
      .then((reply) => current && setTree(reply))
      .catch(reportFailure);
    return () => {
      current = false;
    };
  }, [stamp]);
  useEffect(() => {
    const timer = setInterval(() => setStamp((n) => n + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  useLiveBatch((batch) => {
    if (batch.some((e) => typeof e.type === 'string' && LIVE_PREFIXES.some((p) => e.type.startsWith(p)))) setStamp((n) => n + 1);
  }, []);
  if (tree === null) return html`<main><p>Loading the tree…</p></main>`;
  const actors = tree.actors ?? [];
  const live = new Set(actors.map((a) => a.id));
  return html`<main>
    <section aria-label="Live tree" class="tree">
      <h2>Hall ${tree.hall.id !== undefined ? `${tree.hall.id} (${tree.hall.root})` : tree.hall.root}<${ChartOf} id="hall" live=${live} /></h2>
      <${HallsTable} cluster=${cluster} />
      <p>pid ${tree.hall.pid}, ${tree.hall.running} running${tree.hall.starting ? `, ${tree.hall.starting} starting` : ''}</p>
      ${
        tree.queues.length === 0
          ? html`<p class="note">Nothing runs or waits.</p>`
          : html`<ul aria-label="Slots and queues">${tree.queues.map((q) => html`<${Queue} key=${`${q.kind}:${q.name}`} queue=${q} live=${live} />`)}</ul>`
      }
      <${Faces} tree=${tree} />
      <${Actors} actors=${actors} />
    </section>
  </main>`;
}
