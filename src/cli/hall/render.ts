/** How hall replies and run events look to a person. Machine output (`--json`) bypasses all of this. */
import { formatAge } from '../../domain/format-age.js';
import { PlanEntries } from '../../domain/agent-plan.js';
import { outcomeText } from '../../domain/outcome.js';
import { StreamedAnswer } from '../../domain/streamed-answer.js';
import { picocolors } from '../commonjs-libraries.js';

export { formatAge };

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  green(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

const same = (s: string): string => s;
const PLAIN: Style = { bold: same, dim: same, green: same, red: same, yellow: same, cyan: same };

/** Colour only when writing to a terminal, and never with NO_COLOR. */
export function styleFor(stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Style {
  const on = stream.isTTY === true && env.NO_COLOR === undefined;
  if (!on) return PLAIN;
  const c = picocolors().createColors(true);
  return { bold: c.bold, dim: c.dim, green: c.green, red: c.red, yellow: c.yellow, cyan: c.cyan };
}

/** Columns padded to their widest cell (at least `min`); the last one is not padded. */
export function alignedTable(header: string[], rows: string[][], min: number[] = []): string {
  const widths = header.map((h, i) => Math.max(min[i] ?? 0, h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join(' ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

function oneLine(text: unknown, max: number): string {
  const raw = text === undefined || text === null ? '' : typeof text === 'string' ? text : JSON.stringify(text);
  const s = raw.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

interface PsRow {
  slot: string;
  pid: number;
  base_name: string;
  id: string;
  mission: string;
  /** In a shared cluster: the hall that runs it. */
  hall?: string;
}

/**
 * `ps`: the reference's SLOT (10), PID (8), BASE_NAME columns, then the run id and its mission; in a shared
 * cluster a last HALL column (a PID is a process of that hall's host).
 */
export function renderPs(raiders: PsRow[]): string {
  if (raiders.length === 0) return 'No running raiders.\n';
  const halls = raiders.some((r) => r.hall !== undefined);
  return alignedTable(
    ['SLOT', 'PID', 'BASE_NAME', 'ID', 'MISSION', ...(halls ? ['HALL'] : [])],
    raiders.map((r) => [r.slot, String(r.pid), r.base_name, r.id, oneLine(r.mission, 50), ...(halls ? [r.hall ?? ''] : [])]),
    [10, 8],
  );
}

interface StatusReply {
  running?: number;
  starting?: number;
  root?: string;
  slots?: string[];
  queues?: Record<string, number>;
  binding_queues?: Record<string, number>;
  runs?: Array<{ id: string; slot: string; pid: number; age: number; binding?: string; hall?: string }>;
  waiting?: Array<{ mission_id: string; slot: string; binding?: string; position: number }>;
  storage_error?: string;
  face_errors?: Record<string, string>;
  cron?: Record<
    string,
    { name?: string; next?: string | null; state?: string; last?: { result?: string; status?: string; at?: string } | null }
  >;
  telegram?: Record<string, { state?: string; failures?: number; last_error?: { error?: string } | null }>;
  acp?: { host?: string; port?: number; sessions?: number };
  /** Each ACP entry's unused warm bridges (docs/agents.md, "Warm bridges"). */
  warm_bridges?: Record<string, Array<{ pid: number | null; ready: boolean; age: number }>>;
  /** The ACP entries whose warm bridges fail to start: starts failed in a row, seconds to the next. */
  warm_bridge_retries?: Record<string, { failed_starts: number; retry_in?: number }>;
  [key: string]: unknown;
}

/** The ids of the waiting missions by queue, named as the status table names it (`slot 1bjorn`, `binding B`), in order. */
function waitingIdsByQueue(waiting: NonNullable<StatusReply['waiting']>): Map<string, string[]> {
  const byQueue = new Map<string, string[]>();
  for (const w of [...waiting].sort((a, b) => a.position - b.position)) {
    const queue = w.binding !== undefined ? `binding ${w.binding}` : `slot ${w.slot}`;
    const ids = byQueue.get(queue);
    if (ids) ids.push(w.mission_id);
    else byQueue.set(queue, [w.mission_id]);
  }
  return byQueue;
}

/** The first ids of a queue on one line; `queue` lists them all. */
const IDS_SHOWN = 5;
function idList(ids: string[], waiting: number): string {
  const shown = ids.slice(0, IDS_SHOWN).join(' ');
  const more = Math.max(waiting, ids.length) - Math.min(ids.length, IDS_SHOWN);
  return more > 0 ? `${shown} +${more} more (raider hall queue)`.trimStart() : shown;
}

export function renderStatus(reply: StatusReply, style: Style): string {
  const out: string[] = [];
  out.push(`${style.bold('Hall')} ${reply.root ?? ''}`);
  const starting = reply.starting ? `, ${reply.starting} starting` : '';
  out.push(`${reply.running ?? 0} running${reply.slots && reply.slots.length > 0 ? ` in ${reply.slots.join(', ')}` : ''}${starting}`);
  if (reply.storage_error) out.push(style.red(`storage: ${reply.storage_error}`));
  for (const [face, error] of Object.entries(reply.face_errors ?? {})) out.push(style.red(`${face}: not serving: ${error}`));
  const runs = reply.runs ?? [];
  if (runs.length > 0) {
    out.push('');
    // A shared cluster's status lists every hall's runs: say where each runs.
    const halls = runs.some((r) => r.hall !== undefined);
    out.push(
      alignedTable(
        ['ID', 'SLOT', 'PID', 'AGE', 'BINDING', ...(halls ? ['HALL'] : [])],
        runs.map((r) => [r.id, r.slot, String(r.pid), formatAge(r.age), r.binding ?? '', ...(halls ? [r.hall ?? ''] : [])]),
      ).trimEnd(),
    );
  }
  const queues = [
    ...Object.entries(reply.queues ?? {})
      .filter(([, n]) => n > 0)
      .map(([slot, n]): [string, number] => [`slot ${slot}`, n]),
    ...Object.entries(reply.binding_queues ?? {}).map(([b, n]): [string, number] => [`binding ${b}`, n]),
  ];
  if (queues.length > 0) {
    const ids = waitingIdsByQueue(reply.waiting ?? []);
    out.push('');
    out.push(
      alignedTable(
        ['QUEUE', 'WAITING', 'MISSION IDS (NEXT FIRST)'],
        queues.map(([queue, n]) => [queue, String(n), idList(ids.get(queue) ?? [], n)]),
      ).trimEnd(),
    );
  }
  const cron = Object.entries(reply.cron ?? {});
  if (cron.length > 0) {
    out.push('');
    out.push(
      alignedTable(
        ['CRON', 'RAIDER', 'NEXT', 'LAST'],
        cron.map(([id, job]) => [
          id,
          job.name ?? '',
          job.next ? job.next.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-',
          job.last ? [job.last.status ?? job.last.result, job.last.at?.slice(0, 19).replace('T', ' ')].filter(Boolean).join(' at ') : '-',
        ]),
      ).trimEnd(),
    );
  }
  const bots = Object.entries(reply.telegram ?? {});
  if (bots.length > 0) {
    out.push('');
    out.push(
      alignedTable(
        ['TELEGRAM', 'POLL', 'LAST ERROR'],
        bots.map(([bot, health]) => [
          bot,
          `${health.state ?? '?'}${health.failures ? ` (${health.failures} failures)` : ''}`,
          health.last_error?.error ?? '-',
        ]),
      ).trimEnd(),
    );
  }
  const warm = Object.entries(reply.warm_bridges ?? {}).flatMap(([entry, spares]) =>
    spares.map((s) => [entry, s.pid !== null ? String(s.pid) : '-', formatAge(s.age), s.ready ? 'ready' : 'starting']),
  );
  for (const [entry, retry] of Object.entries(reply.warm_bridge_retries ?? {})) {
    const next = retry.retry_in !== undefined ? `, next in ${formatAge(retry.retry_in)}` : '';
    warm.push([entry, '-', '-', `${retry.failed_starts} failed start${retry.failed_starts === 1 ? '' : 's'}${next}`]);
  }
  if (warm.length > 0) {
    out.push('');
    out.push(alignedTable(['WARM BRIDGE', 'PID', 'AGE', 'STATE'], warm).trimEnd());
  }
  if (reply.acp) {
    const where = reply.acp.port !== undefined ? `${reply.acp.host}:${reply.acp.port}` : 'socket only';
    out.push('');
    out.push(`ACP: ${where}, ${reply.acp.sessions ?? 0} session(s)`);
  }
  return `${out.join('\n')}\n`;
}

/** One stream-json event of a run, as a person reads it; null for events not worth a line. */
function renderRunEvent(event: Record<string, unknown>, style: Style): string | null {
  switch (event.type) {
    case 'run.started':
      return style.dim(`· run started (${String(event.engine ?? 'engine?')}${event.model ? `, ${String(event.model)}` : ''})`);
    case 'message':
      return String(event.content ?? '');
    case 'tool.call':
      return style.cyan(`→ ${String(event.name)} ${oneLine(event.arguments ?? {}, 100)}`);
    case 'plan': {
      const entries = PlanEntries.safeParse(event.entries);
      if (!entries.success) return null;
      return [style.dim('· plan'), ...entries.data.map((e) => style.dim(`  ${PLAN_MARKS[e.status]} ${oneLine(e.content, 100)}`))].join(
        '\n',
      );
    }
    case 'tool.result': {
      const ok = event.ok !== false && event.status === 'succeeded';
      const mark = ok ? style.green('←') : style.red('←');
      return `${mark} ${String(event.name)} ${String(event.status)}: ${oneLine(event.content ?? '', 200)}${event.truncated ? style.dim(' …') : ''}`;
    }
    case 'run.finished': {
      const status = String(event.status ?? 'failed');
      const colour = status === 'completed' ? style.green : status === 'failed' ? style.red : style.yellow;
      return colour(`■ ${status}${event.error ? `: ${String(event.error)}` : ''}`);
    }
    default:
      return null;
  }
}

const PLAN_MARKS: Record<PlanEntries[number]['status'], string> = { pending: '○', in_progress: '▸', completed: '✓' };

/**
 * A run's events as a person reads them, in order, as they come: streamed
 * text (an ACP agent's `message.chunk`s) is written as it arrives, a
 * thought's under a dimmed `· thought:`; every other event worth showing on
 * a line of its own; a final `message` that repeats the streamed text is not
 * written again.
 */
export class RunEventPrinter {
  /** The streamed part the output is in, and whether its last line is still open. */
  private part: 'message' | 'thought' | null = null;
  private openLine = false;
  private readonly answer = new StreamedAnswer();

  constructor(private readonly style: Style) {}

  /** What to write for the run's next event ('' for nothing). */
  write(event: Record<string, unknown>): string {
    if (this.answer.repeats(event)) return '';
    if (event.type === 'message.chunk' || event.type === 'thought.chunk') {
      const text = typeof event.content === 'string' ? event.content : '';
      if (text === '') return '';
      const part = event.type === 'message.chunk' ? 'message' : 'thought';
      const start = this.part === part ? '' : `${this.endLine()}${part === 'thought' ? this.style.dim('· thought: ') : ''}`;
      this.part = part;
      this.openLine = !text.endsWith('\n');
      return `${start}${part === 'thought' ? this.style.dim(text) : text}`;
    }
    const line = renderRunEvent(event, this.style);
    if (line === null) return '';
    const start = this.endLine();
    this.part = null;
    return `${start}${line}\n`;
  }

  /** What the output still needs at its end: the line break of streamed text that ended without one. */
  end(): string {
    const end = this.endLine();
    this.part = null;
    return end;
  }

  private endLine(): string {
    const end = this.openLine ? '\n' : '';
    this.openLine = false;
    return end;
  }
}

/** A hall event-bus event as one concise line (the foreground view of `hall start`). */
export function renderBusEvent(event: Record<string, unknown>, style: Style): string {
  const time = new Date(Number(event.time ?? 0) * 1000).toISOString().slice(11, 19);
  const type = String(event.type);
  const { version: _v, seq: _s, time: _t, ts: _ts, type: _type, ...fields } = event;
  const text = (() => {
    switch (type) {
      case 'raider.spawned':
        return `${fields.id} started (pid ${fields.pid})${fields.binding ? ` in ${fields.binding}` : ''}`;
      case 'raider.done': {
        const status = String(fields.status);
        const colour = status === 'completed' ? style.green : status === 'failed' ? style.red : style.yellow;
        const text = outcomeText({
          status,
          response: fields.response,
          ...(typeof fields.error === 'string' ? { error: fields.error } : {}),
          ...(typeof fields.hall_stop === 'string' ? { hall_stop: fields.hall_stop } : {}),
        });
        return `${fields.id} ${colour(status)}: ${oneLine(text, 120)}`;
      }
      case 'raider.queued':
        return `mission ${fields.mission_id} for ${fields.slot} waits${fields.binding ? ` for ${fields.binding}` : ''} (queue depth ${fields.queue_depth})`;
      case 'raider.signal':
        return `${fields.signal} to ${fields.id} (pid ${fields.pid})`;
      case 'raider.refused':
        return style.red(`${fields.name} refused (${fields.reason}): ${fields.error}`);
      default:
        return Object.keys(fields).length === 0 ? '' : oneLine(fields, 160);
    }
  })();
  return `${style.dim(time)} ${style.bold(type)}${text === '' ? '' : ` ${text}`}`;
}
