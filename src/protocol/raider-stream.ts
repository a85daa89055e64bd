/**
 * The built-in raider's `--stream-json` events (version 1, docs/raider.md
 * "Events"): one canonical JSON object per line, each with `version`, `type`,
 * `seq` and `time`. The raider writes them through these types
 * (src/raider/stream.ts); the hall reads the last `run.finished` of a run's
 * events file (adapters/storage/events-file.ts). Readers ignore types they do
 * not know, and a raider other than the built-in one may write only some of
 * these, so the hall asks of a line no more than `RunFinishedLine` does.
 */
import { z } from 'zod';
import { ContextUsage, RunUsage } from '../domain/run-usage.js';
import { PlanEntries } from '../domain/agent-plan.js';
import { AcpToolContent, AcpToolLocations } from '../domain/acp-tool-content.js';

export const STREAM_VERSION = 1;
/** Longest tool result text the stream carries (`max_content_length`). */
export const MAX_STREAM_CONTENT = 1000;

/** The stream's view of a tool result: the first 1000 characters, and whether there was more. */
export function streamToolContent(content: string): { content: string; size: number; truncated: boolean } {
  const chars = [...content];
  return {
    content: chars.length > MAX_STREAM_CONTENT ? chars.slice(0, MAX_STREAM_CONTENT).join('') : content,
    size: chars.length,
    truncated: chars.length > MAX_STREAM_CONTENT,
  };
}

/** The fields the stream sets on every event, last, so a payload key of the same name never overrides them. */
export const StreamEventHead = z.object({
  version: z.literal(STREAM_VERSION),
  seq: z.number().int().positive(),
  /** Epoch seconds. */
  time: z.number(),
});

const RunStatus = z.enum(['completed', 'failed', 'cancelled', 'interrupted']);

/** Each event's own fields, by type. */
export const STREAM_PAYLOADS = {
  'run.started': z.object({ engine: z.string(), model: z.string().optional() }),
  /** `running`, then the run's end status. */
  'run.state': z.object({ state: z.union([z.literal('running'), RunStatus]) }),
  'tool.call': z.object({
    call: z.string(),
    name: z.string(),
    arguments: z.record(z.string(), z.unknown()),
    status: z.literal('dispatched'),
    /** The ACP bridge's: the call's text and diffs as the agent gave them, when it gave a diff (docs/agents.md). */
    acp_content: AcpToolContent.optional(),
    /** The ACP bridge's: the places the call touches, `{path, line?}`. */
    locations: AcpToolLocations.optional(),
  }),
  'tool.result': z.object({
    call: z.string(),
    name: z.string(),
    status: z.enum(['succeeded', 'failed', 'cancelled']),
    ok: z.boolean(),
    /** Characters of the whole result. */
    size: z.number().int().nonnegative(),
    /** The first MAX_STREAM_CONTENT characters. */
    content: z.string(),
    truncated: z.boolean(),
    acp_content: AcpToolContent.optional(),
    locations: AcpToolLocations.optional(),
  }),
  /** A call the permission policy refused, or a question put to the permission channel (with its answer). */
  permission: z.object({
    call: z.string(),
    name: z.string(),
    decision: z.enum(['allowed', 'refused']),
    asked: z.boolean(),
    answer: z.enum(['once', 'session', 'no']).optional(),
    reason: z.string(),
    rule: z.string().optional(),
  }),
  /** The final answer. */
  message: z.object({ role: z.literal('assistant'), content: z.string() }),
  /** A piece of the agent's answer as it streams (the ACP bridge's; `message` is still the whole final answer). */
  'message.chunk': z.object({ role: z.literal('assistant'), content: z.string() }),
  /** A piece of the agent's reasoning as it streams (an ACP agent's `agent_thought_chunk`); never part of the answer. */
  'thought.chunk': z.object({ role: z.literal('assistant'), content: z.string() }),
  /** The agent's plan for the turn, whole each time it changes (an ACP agent's `plan` update). */
  plan: z.object({ entries: PlanEntries }),
  /**
   * Tokens in the agent's context and the size of its window, and the session's
   * cumulative cost when the agent says it (an ACP agent's `usage_update`).
   */
  usage: ContextUsage,
  /** The run document: only a completed run has `response` and `metrics`, a failed one `error`, an interrupted one `signal`. */
  'run.finished': z.object({
    version: z.literal(1),
    status: RunStatus,
    response: z.string().optional(),
    error: z.string().optional(),
    signal: z.enum(['INT', 'TERM']).optional(),
    metrics: z.object({ raids: z.number(), iterations: z.number(), tool_calls: z.number(), time_ms: z.number() }).optional(),
    /** Seconds, rounded to milliseconds. */
    elapsed: z.number(),
    session: z.object({ id: z.string(), path: z.string() }).optional(),
    /** The ACP bridge's: why the binding's agent session was not continued (a new one was started). */
    session_error: z.string().optional(),
    /** The ACP bridge's: the agent session its prompt went to and the agent command, for the hall to record with the binding. */
    agent_session: z.object({ id: z.string(), agent: z.string() }).optional(),
    /** What the run used, as far as the raider knows it (an ACP agent's last `usage_update` and its prompt result's `usage`). */
    usage: RunUsage.optional(),
  }),
} as const;

export type StreamEventType = keyof typeof STREAM_PAYLOADS;
export type StreamPayload<T extends StreamEventType> = z.input<(typeof STREAM_PAYLOADS)[T]>;

function eventOf<T extends StreamEventType>(type: T, payload: (typeof STREAM_PAYLOADS)[T]) {
  return payload.extend({ ...StreamEventHead.shape, type: z.literal(type) });
}

/** One line of the stream as the built-in raider writes it. */
export const StreamEvent = z.discriminatedUnion('type', [
  eventOf('run.started', STREAM_PAYLOADS['run.started']),
  eventOf('run.state', STREAM_PAYLOADS['run.state']),
  eventOf('tool.call', STREAM_PAYLOADS['tool.call']),
  eventOf('tool.result', STREAM_PAYLOADS['tool.result']),
  eventOf('permission', STREAM_PAYLOADS.permission),
  eventOf('message', STREAM_PAYLOADS.message),
  eventOf('message.chunk', STREAM_PAYLOADS['message.chunk']),
  eventOf('thought.chunk', STREAM_PAYLOADS['thought.chunk']),
  eventOf('plan', STREAM_PAYLOADS.plan),
  eventOf('usage', STREAM_PAYLOADS.usage),
  eventOf('run.finished', STREAM_PAYLOADS['run.finished']),
]);
export type StreamEvent = z.infer<typeof StreamEvent>;

/**
 * What the hall needs of a line to take it as a run's document: an object of
 * type `run.finished`. Any other field is the raider's to choose.
 */
export const RunFinishedLine = z.looseObject({ type: z.literal('run.finished') });
