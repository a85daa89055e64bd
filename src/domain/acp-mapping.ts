/**
 * How the hall's world looks in ACP: prompt blocks become a mission, a run's
 * stream-json events become `session/update`s, a journal becomes a replay, and
 * a run's end becomes a stop reason or a JSON-RPC error.
 */

import type { SessionUpdate, ToolCallContent, ToolCallUpdate, ToolKind } from '@agentclientprotocol/sdk';
import { isRecord } from './records.js';
import { AcpToolContent, type AcpToolLocations, keptLocations } from './acp-tool-content.js';
import { definedFields } from './defined-fields.js';
import { PlanEntries } from './agent-plan.js';
import { ContextUsage } from './run-usage.js';

/** One `session/update`, as the ACP SDK types it. */
export type AcpUpdate = SessionUpdate;
/** The tool call shown before a permission question: a `tool_call` update. */
export type ToolCallShown = Extract<SessionUpdate, { sessionUpdate: 'tool_call' }>;

const TOOL_KINDS: Record<string, ToolKind> = {
  read_file: 'read',
  list_dir: 'search',
  write_file: 'edit',
  edit_file: 'edit',
  bash: 'execute',
  web_fetch: 'fetch',
  web_search: 'search',
  delete_file: 'delete',
  move_file: 'move',
};

export function toolKind(name: string): ToolKind {
  return TOOL_KINDS[name] ?? 'other';
}

const ACP_TOOL_KINDS: readonly ToolKind[] = [
  'read',
  'edit',
  'delete',
  'move',
  'search',
  'execute',
  'think',
  'fetch',
  'switch_mode',
  'other',
];

function isToolKind(kind: string): kind is ToolKind {
  return ACP_TOOL_KINDS.some((known) => known === kind);
}

/** A kind a raider named, as ACP knows it: one ACP does not know is shown as `other`, as the protocol allows no other. */
function asToolKind(kind: string): ToolKind {
  return isToolKind(kind) ? kind : 'other';
}

/** A short title for a tool call: the command for bash, the path for file tools. */
export function toolTitle(name: string, args: unknown): string {
  if (isRecord(args)) {
    if (typeof args.command === 'string') return `${name}: ${args.command}`;
    if (typeof args.path === 'string') return `${name} ${args.path}`;
  }
  return name;
}

function textContent(text: string): ToolCallContent[] {
  return [{ type: 'content', content: { type: 'text', text } }];
}

/**
 * The mission text of a prompt: text blocks, and resource links as references
 * (`[name](uri)`), joined by newlines. Other blocks are not advertised.
 */
export function promptText(blocks: readonly unknown[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    else if (block.type === 'resource_link' && typeof block.uri === 'string') {
      const name = typeof block.name === 'string' && block.name !== '' ? block.name : block.uri;
      parts.push(`[${name}](${block.uri})`);
    }
  }
  return parts.join('\n').trim();
}

export function toolCallId(runId: string, call: string): string {
  return `${runId}:${call}`;
}

/** The tool calls a client has been shown, by tool call id: the title it was shown under, and whether with its agent's own content. */
export type AnnouncedCalls = Map<string, { title: string; agentContent: boolean }>;

/**
 * The updates one stream-json event of a run becomes; `announced` holds the
 * tool calls already shown. Streamed text (`message.chunk`, `thought.chunk`)
 * goes on as it comes; a final `message` that repeats it is the caller's to
 * leave out (domain/streamed-answer.ts).
 */
export function updatesForEvent(runId: string, event: Record<string, unknown>, announced: AnnouncedCalls): AcpUpdate[] {
  switch (event.type) {
    case 'message':
    case 'message.chunk':
    case 'thought.chunk': {
      const text = typeof event.content === 'string' ? event.content : '';
      if (text === '' || (event.role !== undefined && event.role !== 'assistant')) return [];
      const sessionUpdate = event.type === 'thought.chunk' ? 'agent_thought_chunk' : 'agent_message_chunk';
      return [{ sessionUpdate, content: { type: 'text', text } }];
    }
    case 'plan': {
      const entries = PlanEntries.safeParse(event.entries);
      return entries.success ? [{ sessionUpdate: 'plan', entries: entries.data }] : [];
    }
    case 'usage': {
      const usage = ContextUsage.safeParse(event);
      if (!usage.success) return [];
      const { context_used: used, context_size: size, cost } = usage.data;
      return [{ sessionUpdate: 'usage_update', used, size, ...(cost !== undefined ? { cost } : {}) }];
    }
    case 'tool.call': {
      const name = String(event.name ?? 'tool');
      const id = toolCallId(runId, String(event.call ?? '?'));
      const given = agentGiven(event);
      const shown = announced.get(id);
      if (shown !== undefined) {
        if (given.content !== undefined) announced.set(id, { ...shown, agentContent: true });
        return [{ sessionUpdate: 'tool_call_update', toolCallId: id, status: 'in_progress', ...given }];
      }
      // An ACP agent's call (through the bridge) keeps its own title and kind, its diffs and its locations.
      const title = typeof event.title === 'string' && event.title !== '' ? event.title : toolTitle(name, event.arguments);
      announced.set(id, { title, agentContent: given.content !== undefined });
      return [
        {
          sessionUpdate: 'tool_call',
          toolCallId: id,
          title,
          kind: typeof event.kind === 'string' ? asToolKind(event.kind) : toolKind(name),
          status: 'in_progress',
          rawInput: isRecord(event.arguments) ? event.arguments : {},
          ...given,
        },
      ];
    }
    case 'tool.result': {
      const id = toolCallId(runId, String(event.call ?? '?'));
      const ok = event.status === 'succeeded' && event.ok !== false;
      const text = typeof event.content === 'string' ? event.content : '';
      // The result names its tool as its call was shown (the tool's name when the call was not),
      // so a client that shows results on their own (a terminal) says which tool answered.
      return [
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: id,
          title: announced.get(id)?.title ?? String(event.name ?? 'tool'),
          status: ok ? 'completed' : 'failed',
          content: textContent(event.truncated ? `${text}\n…` : text),
          ...agentGiven(event),
        },
      ];
    }
    default:
      return [];
  }
}

/** The content and locations an ACP agent gave its call, as it gave them; none for other raiders' calls. */
function agentGiven(event: Record<string, unknown>): { content?: ToolCallContent[]; locations?: AcpToolLocations } {
  const content = AcpToolContent.safeParse(event.acp_content);
  return {
    ...(content.success && content.data.length > 0 ? { content: content.data } : {}),
    ...definedFields({ locations: keptLocations(event.locations) }),
  };
}

/** The tool call shown before a permission question about it. */
export function permissionToolCall(
  runId: string,
  q: { id: string; call?: string; tool: string; title: string; kind: string; input: Record<string, unknown>; reason: string },
): ToolCallShown {
  const subject = typeof q.input.command === 'string' ? q.input.command : typeof q.input.path === 'string' ? q.input.path : '';
  const text = [subject, q.reason].filter((s) => s !== '').join('\n');
  return {
    sessionUpdate: 'tool_call',
    toolCallId: toolCallId(runId, q.call ?? q.id),
    title: q.title || toolTitle(q.tool, q.input),
    kind: asToolKind(q.kind),
    status: 'pending',
    rawInput: q.input,
    ...(text !== '' ? { content: textContent(text) } : {}),
  };
}

/**
 * The call a question is about, as the client is shown it before the question
 * (`shown`) and as the question names it (`asked`). ACP's `toolCall` in
 * `session/request_permission` is a ToolCallUpdate, like `tool_call_update`:
 * each field given replaces what the client shows. A call not shown yet is
 * made from the question, the only word on it there is. A call already shown
 * (an ACP agent's own, by the run's events) keeps what it was shown with: its
 * title, kind and input may be the agent's, where the question has the
 * bridge's stand-ins (the call's id, `other`) for what the agent left out.
 * The question marks it pending, gives it the question's text unless it
 * shows its agent's own content (a diff), and names it by the title it shows.
 */
export function questionCall(call: ToolCallShown, announced: AnnouncedCalls | undefined): { shown: AcpUpdate; asked: ToolCallUpdate } {
  const was = announced?.get(call.toolCallId);
  if (was === undefined) {
    announced?.set(call.toolCallId, { title: call.title, agentContent: false });
    const { sessionUpdate: _kind, ...asked } = call;
    return { shown: call, asked };
  }
  const marked: ToolCallUpdate = {
    toolCallId: call.toolCallId,
    status: 'pending',
    ...(was.agentContent || call.content === undefined ? {} : { content: call.content }),
  };
  return { shown: { sessionUpdate: 'tool_call_update', ...marked }, asked: { ...marked, title: was.title } };
}

export interface RunEnd {
  status: string;
  signaled: number;
  response?: unknown;
  error?: string;
  /** The raider's last stderr lines, for a run that ended without a result: why it did (e.g. "no engine configured"). */
  said?: readonly string[];
}

export type PromptAnswer = { stopReason: 'end_turn' | 'cancelled' } | { error: string };

/**
 * How a prompt ends: a run whose cancel was asked for is always `cancelled`;
 * a completed run `end_turn`; a cancelled or interrupted one `cancelled`;
 * anything else (failed, killed without a cancel) a JSON-RPC error.
 */
export function promptAnswer(end: RunEnd, cancelRequested: boolean): PromptAnswer {
  if (cancelRequested) return { stopReason: 'cancelled' };
  if (end.status === 'completed' && !end.signaled) return { stopReason: 'end_turn' };
  if (end.status === 'cancelled' || end.status === 'interrupted') return { stopReason: 'cancelled' };
  const error = end.error ?? 'the run ended without a result';
  // What the raider said first: it is the reason, the hall's own words only say how it ended.
  if (end.said !== undefined && end.said.length > 0) return { error: `raider run failed: ${end.said.join('\n')}\n(${error})` };
  return { error: `raider run failed: ${error}` };
}

/** The final answer as one chunk, when the run streamed no message of its own. */
export function finalChunk(end: RunEnd, streamedText: boolean): AcpUpdate | null {
  if (streamedText || end.response === undefined || end.response === null) return null;
  if (end.status !== 'completed' && end.status !== 'cancelled' && end.status !== 'interrupted') return null;
  const text = typeof end.response === 'string' ? end.response : JSON.stringify(end.response);
  return text === '' ? null : { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } };
}

/** A journal replayed as updates, for session/load. */
export function replayUpdates(records: readonly Record<string, unknown>[]): AcpUpdate[] {
  const out: AcpUpdate[] = [];
  // One for the whole journal: a result is shown under the title of its call.
  const announced: AnnouncedCalls = new Map();
  for (const r of records) {
    const run = typeof r.run === 'string' ? r.run : 'r0';
    if (r.type === 'message' && typeof r.content === 'string') {
      out.push({
        sessionUpdate: r.role === 'user' ? 'user_message_chunk' : 'agent_message_chunk',
        content: { type: 'text', text: r.content },
      });
    } else if (r.type === 'tool.call' || r.type === 'tool.result') {
      out.push(...updatesForEvent(run, r, announced));
    }
  }
  return out;
}
