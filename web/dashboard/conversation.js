// A run's output as a conversation, from its events file (docs/raider.md
// "Events"; the built-in raider and the ACP bridge write the same kinds):
// the mission, the agent's messages and thoughts, each tool call with its
// result (and a file edit as a diff), the permission questions and how they
// ended, plan updates, usage and cost, the cancel's escalation from the
// hall's events, and the end. A permission about a call is shown in that
// call. Each part is a list item holding an article named for what it is,
// so a reader (and a test) finds each by its role.
import { h } from 'preact';
import htm from 'htm';
import { preciseTime } from './format.js';

const html = htm.bind(h);
/** Tool input or output longer than this many characters (or lines) starts collapsed. */
const LONG_CHARS = 400;
const LONG_LINES = 8;

function text(value) {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

const isLong = (value) => value.length > LONG_CHARS || value.split('\n').length > LONG_LINES;

/** Text shown open when short and behind a disclosure when long. */
function Block({ label, value }) {
  if (value === '') return null;
  if (!isLong(value)) return html`<div class="part"><span class="muted">${label}</span><pre aria-label=${label}>${value}</pre></div>`;
  return html`<details class="part"><summary>${label} (${value.length} characters)</summary><pre aria-label=${label}>${value}</pre></details>`;
}

/** A unified diff's lines, each marked as added, removed, a hunk header or context. */
function DiffLines({ lines }) {
  return html`<pre class="diff" aria-label="Diff">${lines.map((line) => {
    const kind =
      line.startsWith('+++') || line.startsWith('---')
        ? 'file'
        : line.startsWith('@@')
          ? 'hunk'
          : line.startsWith('+')
            ? 'add'
            : line.startsWith('-')
              ? 'del'
              : '';
    return html`<span class=${kind}>${line}${'\n'}</span>`;
  })}</pre>`;
}

/** The lines of an edit given as old and new text: the lines both share at the start and end as context, the rest removed and added. */
function editLines(path, before, after) {
  const old = before.split('\n');
  const now = after.split('\n');
  let head = 0;
  while (head < old.length && head < now.length && old[head] === now[head]) head++;
  let tail = 0;
  while (tail < old.length - head && tail < now.length - head && old[old.length - 1 - tail] === now[now.length - 1 - tail]) tail++;
  const context = (lines) => lines.map((l) => ` ${l}`);
  return [
    `--- ${path}`,
    `+++ ${path}`,
    ...context(old.slice(0, head)),
    ...old.slice(head, old.length - tail).map((l) => `-${l}`),
    ...now.slice(head, now.length - tail).map((l) => `+${l}`),
    ...context(old.slice(old.length - tail)),
  ];
}

const UNIFIED = /^(--- |\+\+\+ |@@ )/m;

/** A tool call's edit as diff lines, or null: an edit's old and new text in its input, or a unified diff in its result. */
function diffOf(call, result) {
  const args = call?.arguments ?? {};
  const before = args.old_string ?? args.oldText ?? args.old_text;
  const after = args.new_string ?? args.newText ?? args.new_text;
  if (typeof before === 'string' && typeof after === 'string') return editLines(text(args.path ?? args.file_path), before, after);
  if (typeof result?.content === 'string' && UNIFIED.test(result.content)) return result.content.replace(/\n$/, '').split('\n');
  return null;
}

function ToolCall({ call, result, permissions }) {
  const title = text(call.title ?? call.name);
  const diff = diffOf(call, result);
  const status = result === undefined ? 'running' : text(result.status ?? (result.ok === false ? 'failed' : 'succeeded'));
  const output = result === undefined ? '' : text(result.content);
  return html`<article aria-label=${`Tool call ${title}`} class="tool">
    <h4>${title} ${call.kind !== undefined ? html`<span class="kind">${text(call.kind)}</span>` : null} <span class=${`status ${status === 'succeeded' ? 'completed' : status}`}>${status}</span></h4>
    <${Block} label="Input" value=${text(call.arguments)} />
    ${permissions.map((e) => html`<${Permission} event=${e} />`)}
    ${diff !== null ? html`<div class="part"><span class="muted">Edit</span><${DiffLines} lines=${diff} /></div>` : null}
    ${diff !== null && output === text(diff.join('\n')) ? null : html`<${Block} label="Result" value=${output} />`}
    ${result?.truncated === true ? html`<p class="muted">Result cut at ${output.length} of ${text(result.size)} characters.</p>` : null}
  </article>`;
}

/** How a permission question or refusal ended, in words. */
function permissionEnd(e) {
  if (e.withdrawn === true) return 'withdrawn (the run was cancelled)';
  const answer = e.answer === 'once' ? ' once' : e.answer === 'session' ? ' for the session' : '';
  return `${text(e.decision)}${answer}`;
}

function Permission({ event }) {
  return html`<article aria-label=${`Permission ${text(event.name)}`} class="permission">
    <h4>${event.asked ? 'Asked' : 'Policy'}: may it run ${text(event.name)}?</h4>
    <p><strong class=${event.decision === 'allowed' ? 'allowed' : 'refused'}>${permissionEnd(event)}</strong>${event.reason ? ` — ${text(event.reason)}` : ''}${event.rule ? ` (rule ${text(event.rule)})` : ''}</p>
  </article>`;
}

const PLAN_MARK = { completed: '✓', in_progress: '▸', pending: '○' };

function Plan({ event }) {
  const entries = Array.isArray(event.entries) ? event.entries : [];
  return html`<article aria-label="Plan" class="plan"><h4>Plan</h4>
    <ol>${entries.map((e) => html`<li class=${text(e.status)}><span aria-hidden="true">${PLAN_MARK[e.status] ?? '·'} </span>${text(e.content)} <span class="muted">(${text(e.status).replace('_', ' ')}, ${text(e.priority)})</span></li>`)}</ol>
  </article>`;
}

function Usage({ event }) {
  const cost = event.cost ? `; cost so far ${Number(event.cost.amount).toFixed(4)} ${text(event.cost.currency)}` : '';
  return html`<article aria-label="Usage" class="usage"><p>Usage: ${text(event.context_used)} of ${text(event.context_size)} tokens of context${cost}</p></article>`;
}

function End({ event }) {
  const metrics = event.metrics;
  return html`<article aria-label="End" class="end"><h4>Ended: <span class=${`status ${text(event.status)}`}>${text(event.status)}</span></h4>
    ${event.response !== undefined ? html`<pre>${text(event.response)}</pre>` : null}
    ${event.error !== undefined ? html`<p role="note">Error: ${text(event.error)}</p>` : null}
    ${event.signal !== undefined ? html`<p>Stopped by SIG${text(event.signal)}</p>` : null}
    <p class="muted">${typeof event.elapsed === 'number' ? `${event.elapsed.toFixed(3)} s` : ''}${metrics ? `; ${metrics.tool_calls} tool calls, ${metrics.iterations} turns` : ''}</p>
  </article>`;
}

/**
 * The cancel's escalation from the hall's events of the run (its ring on the
 * bus): who asked, then each signal at its time and its offset from the first.
 */
function Escalation({ timeline }) {
  const signals = timeline.filter((e) => e.type === 'raider.signal');
  if (signals.length === 0) return null;
  const first = signals[0].time;
  // Only the dashboard's own cancel and kill are on the bus; a socket's or a chat's shows as its first signal.
  const asked = timeline.find((e) => e.type === 'dashboard.cancel' || e.type === 'dashboard.kill');
  return html`<article aria-label="Cancel escalation" class="escalation"><h4>Cancel escalation</h4>
    ${asked ? html`<p class="muted">${asked.type === 'dashboard.kill' ? 'Kill' : 'Cancel'} asked at ${preciseTime(asked.time * 1000)}</p>` : null}
    <ol aria-label="Signals">${signals.map((e) => {
      const offset = e.time - first;
      return html`<li><strong>${text(e.signal)}</strong> at ${offset > 0 ? `t + ${offset.toFixed(2)} s` : `t = ${preciseTime(e.time * 1000)}`} to pid ${text(e.pid)}</li>`;
    })}</ol>
  </article>`;
}

/**
 * The conversation's parts in order: consecutive message (or thought) chunks
 * make one message; a tool result joins its call; the final `message` that
 * repeats the streamed text is not shown twice.
 */
export function conversationParts(events) {
  const parts = [];
  const calls = new Map();
  let streamed;
  for (const e of events) {
    if (e === null || typeof e !== 'object' || typeof e.type !== 'string') continue;
    const last = parts.at(-1);
    switch (e.type) {
      case 'message.chunk':
      case 'thought.chunk': {
        const kind = e.type === 'message.chunk' ? 'message' : 'thought';
        if (last?.kind === kind && last.streaming) last.text += text(e.content);
        else parts.push({ kind, text: text(e.content), streaming: true, time: e.time });
        if (kind === 'message') streamed = parts.at(-1);
        break;
      }
      case 'message':
        if (streamed?.text.trim().endsWith(text(e.content).trim())) break;
        parts.push({ kind: 'message', text: text(e.content), time: e.time });
        break;
      case 'tool.call': {
        const part = { kind: 'tool', call: e, result: undefined, permissions: [], time: e.time };
        calls.set(e.call, part);
        parts.push(part);
        break;
      }
      case 'tool.result': {
        const part = calls.get(e.call);
        if (part) part.result = e;
        else parts.push({ kind: 'tool', call: e, result: e, permissions: [], time: e.time });
        break;
      }
      case 'permission': {
        // A question about a call already shown belongs to it: the call waits on its answer.
        const part = calls.get(e.call);
        if (part) part.permissions.push(e);
        else parts.push({ kind: 'permission', event: e, time: e.time });
        break;
      }
      case 'plan':
      case 'usage':
      case 'note':
        parts.push({ kind: e.type, event: e, time: e.time });
        break;
      case 'run.finished':
        parts.push({ kind: 'end', event: e, time: e.time });
        break;
      default:
        break;
    }
  }
  return parts;
}

function Part({ part }) {
  switch (part.kind) {
    case 'message':
      return html`<article aria-label="Agent message" class="message"><h4>Agent</h4><pre>${part.text}</pre></article>`;
    case 'thought':
      return html`<article aria-label="Agent thought" class="thought"><details><summary>Thought</summary><pre>${part.text}</pre></details></article>`;
    case 'tool':
      return html`<${ToolCall} call=${part.call} result=${part.result} permissions=${part.permissions} />`;
    case 'permission':
      return html`<${Permission} event=${part.event} />`;
    case 'plan':
      return html`<${Plan} event=${part.event} />`;
    case 'usage':
      return html`<${Usage} event=${part.event} />`;
    case 'note':
      return html`<article aria-label="Note" class="note"><p>Note (${text(part.event.setting)}): ${text(part.event.text)}</p></article>`;
    case 'end':
      return html`<${End} event=${part.event} />`;
    default:
      return null;
  }
}

/** The run's conversation: `detail` as /api/runs/ID answers (its events, its hall events in `timeline`). */
export function Conversation({ detail }) {
  const parts = conversationParts(detail.events);
  const running = detail.run.status === 'running';
  const ended = parts.some((p) => p.kind === 'end');
  // The escalation goes where its first signal fell; a raider that wrote no end (killed) ends with the hall's word.
  const signal = detail.timeline.find((e) => e.type === 'raider.signal');
  if (signal !== undefined) {
    const after = parts.findIndex((p) => typeof p.time === 'number' && p.time > signal.time);
    parts.splice(after < 0 ? parts.length : after, 0, { kind: 'escalation', time: signal.time });
  }
  const done = detail.timeline.find((e) => e.type === 'raider.done');
  if (!ended && done !== undefined) parts.push({ kind: 'end', event: { status: done.status, error: done.error }, time: done.time });
  const at = (time) => (typeof time === 'number' ? html`<time class="muted">${preciseTime(time * 1000)}</time>` : null);
  return html`<section aria-label="Conversation" class="conversation"><h3>Conversation</h3>
    ${detail.truncated ? html`<p class="muted">The events file is long: its newest part is shown.</p>` : null}
    <ol role="list">
      <li><article aria-label="Mission" class="mission"><h4>Mission</h4><pre>${text(detail.run.mission ?? '(not known: the run ended before this hall started)')}</pre></article></li>
      ${parts.map((part) => html`<li>${at(part.time)}${part.kind === 'escalation' ? html`<${Escalation} timeline=${detail.timeline} />` : html`<${Part} part=${part} />`}</li>`)}
      ${running && done === undefined ? html`<li><p role="status" class="muted">Running: the page follows its events.</p></li>` : null}
    </ol>
  </section>`;
}
