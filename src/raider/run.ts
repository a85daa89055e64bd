/**
 * One run from `run.started` to `run.finished`: drives the agent loop and
 * writes what happens to the event stream and the journal in the orders
 * docs/raider.md gives. The journal gets full tool results; the
 * stream gets them cut to 1000 characters.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { runDocument, type RunDocument, type RunEnd, type SessionInfo } from './document.js';
import type { Engine, HistoryEntry } from './engines/engine.js';
import type { JournalWriter } from './journal.js';
import { runAgentLoop, type LoopOutcome, type LoopSink } from './loop.js';
import type { PermissionEvent, ToolGate } from './permissions/gate.js';
import type { RunSignals } from './signals.js';
import type { StreamPayload } from '../protocol/raider-stream.js';
import { streamToolContent } from '../protocol/raider-stream.js';
import type { EventSink } from './stream.js';
import type { ProcessGroups } from './tools/process-groups.js';
import type { Tool } from './tools/tool.js';
import { definedFields } from '../domain/defined-fields.js';

/** How long an interrupt waits for the loop to notice before finishing anyway. */
const INTERRUPT_GRACE_MS = 2000;

export interface RunParams {
  engine: Engine;
  tools: ReadonlyMap<string, Tool>;
  root: string;
  mission: string;
  /** The resumed conversation, without the current mission. */
  history: readonly HistoryEntry[];
  maxIterations: number;
  signals: RunSignals;
  events: EventSink;
  journal: JournalWriter | undefined;
  system: string;
  /** Builds the permission gate; its events go to the stream and the journal. */
  makeGate?: (onEvent: (event: PermissionEvent) => void) => ToolGate;
  processes: ProcessGroups;
  /** The environment tool processes get. */
  toolEnv: NodeJS.ProcessEnv;
}

export async function performRun(p: RunParams): Promise<RunDocument> {
  const started = performance.now();
  const { engine, events, journal } = p;
  const model = definedFields({ model: engine.model });

  events.emit('run.started', { engine: engine.name, ...model });
  const run = journal?.nextRun();
  journal?.append('run.started', { engine: engine.name, ...model }, run);
  journal?.append('message', { role: 'user', content: p.mission }, run);
  events.emit('run.state', { state: 'running' });

  // After the outcome is fixed, a straggling loop must not add events.
  let open = true;
  const sink: LoopSink = {
    toolCall(call) {
      if (!open) return;
      const fields: StreamPayload<'tool.call'> = { call: call.id, name: call.name, arguments: call.arguments, status: 'dispatched' };
      events.emit('tool.call', fields);
      journal?.append('tool.call', fields, run);
    },
    toolResult(r) {
      if (!open) return;
      const base = { call: r.call, name: r.name, status: r.status, ok: r.ok };
      events.emit('tool.result', { ...base, ...streamToolContent(r.content) });
      journal?.append('tool.result', { ...base, size: [...r.content].length, content: r.content }, run);
    },
  };

  const onPermission = (e: PermissionEvent): void => {
    if (!open) return;
    events.emit('permission', { ...e });
    journal?.append('permission', { ...e }, run);
  };
  const gate = p.makeGate?.(onPermission);

  const history: HistoryEntry[] = [...p.history, { role: 'user', content: p.mission }];
  const loop = runAgentLoop({
    engine,
    tools: p.tools,
    root: p.root,
    history,
    maxIterations: p.maxIterations,
    signal: p.signals.signal,
    sink,
    system: p.system,
    ...(gate ? { gate } : {}),
    processes: p.processes,
    env: p.toolEnv,
  });
  const stuck: LoopOutcome = { status: 'cancelled', counts: { iterations: 0, toolCalls: 0 } };
  const outcome = await Promise.race([
    loop,
    p.signals.interrupted.then(() => Promise.race([loop, delay(INTERRUPT_GRACE_MS).then(() => stuck)])),
  ]);
  p.signals.settle();
  open = false;

  const elapsedMs = performance.now() - started;
  const end = toRunEnd(outcome, p.signals, elapsedMs);
  if (end.status === 'completed') {
    events.emit('message', { role: 'assistant', content: end.response });
    journal?.append('message', { role: 'assistant', content: end.response }, run);
  }
  events.emit('run.state', { state: end.status });

  const session: SessionInfo | undefined = journal ? { id: journal.id, path: journal.path } : undefined;
  const doc = runDocument(end, elapsedMs, session, outcome.counts.tokens);
  journal?.append('run.finished', journalFinish(doc), run);
  events.emit('run.finished', { ...doc });
  return doc;
}

function toRunEnd(outcome: LoopOutcome, signals: RunSignals, elapsedMs: number): RunEnd {
  // An interrupt wins over whatever the loop made of the abort.
  const interruptedBy = signals.interruptedBy;
  if (interruptedBy && outcome.status === 'cancelled') return { status: 'interrupted', signal: interruptedBy };
  switch (outcome.status) {
    case 'completed':
      return {
        status: 'completed',
        response: outcome.response,
        metrics: {
          raids: 1,
          iterations: outcome.counts.iterations,
          tool_calls: outcome.counts.toolCalls,
          time_ms: Math.round(elapsedMs),
        },
      };
    case 'failed':
      return { status: 'failed', error: outcome.error };
    case 'cancelled':
      return { status: 'cancelled' };
  }
}

/** The journal's `run.finished`: the document without `version`, `response` and `session`. */
function journalFinish(doc: RunDocument): Record<string, unknown> {
  const { version: _v, response: _r, session: _s, ...rest } = doc;
  return rest;
}
