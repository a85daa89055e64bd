/**
 * An ACP prompt turn's `session/update`s as the run's stream-json events
 * (docs/agents.md "How a run maps to ACP"): each agent message chunk is a
 * `message.chunk`, a tool call a `tool.call` (with the ACP kind and title),
 * its end a `tool.result`; a thought a `thought.chunk`, a plan a `plan`, a
 * usage update a `usage`. The agent's final message (the text after its
 * last tool call, or of its last message id) is the run's response.
 */
import type { SessionUpdate, ToolCallContent, ToolCallLocation, ToolCallUpdate } from '@agentclientprotocol/sdk';
import { keptLocations, keptToolContent } from '../domain/acp-tool-content.js';
import { z } from 'zod';
import { definedFields } from '../domain/defined-fields.js';
import type { RunUsage } from '../domain/run-usage.js';
import { type StreamPayload, streamToolContent } from '../protocol/raider-stream.js';
import type { EventSink } from './event-stream.js';

/** What the turn has heard of a tool call: each field as the agent last gave it. */
interface ToolHeard {
  title?: string;
  kind?: string;
  rawInput?: unknown;
}

/** A tool call as the run's events and the hall's questions name it: stand-ins (its id, `other`) for what the agent never said. */
export interface ToolSeen {
  title: string;
  kind: string;
  /** The call's input, when the agent gave one. */
  rawInput?: unknown;
}

export class TurnUpdates {
  private finalText = '';
  private messageId: string | undefined;
  private readonly tools = new Map<string, ToolHeard>();
  private context: Pick<RunUsage, 'context_used' | 'context_size' | 'cost'> = {};

  constructor(private readonly events: EventSink) {}

  /** The agent's final message so far. */
  get response(): string {
    return this.finalText;
  }

  /** The agent's context and cost as its last usage updates said them (a cost stays until a new one is said). */
  get usage(): Pick<RunUsage, 'context_used' | 'context_size' | 'cost'> {
    return this.context;
  }

  /**
   * The call a permission question names: its `toolCall` is a ToolCallUpdate
   * (an agent may name a call it announced by its id alone), so each field it
   * gives replaces what the turn has heard of the call, and the rest stays.
   * The turn goes on knowing the call so, as a client shown the question would.
   */
  asked(toolCall: ToolCallUpdate): ToolSeen {
    this.hear(toolCall);
    return this.seen(toolCall.toolCallId);
  }

  apply(update: SessionUpdate): void {
    switch (update.sessionUpdate) {
      case 'agent_message_chunk': {
        if (update.content.type !== 'text') return;
        const id = update.messageId ?? undefined;
        if (id !== undefined && id !== this.messageId) {
          this.messageId = id;
          this.finalText = '';
        }
        this.finalText += update.content.text;
        this.events.emit('message.chunk', { role: 'assistant', content: update.content.text });
        return;
      }
      case 'agent_thought_chunk': {
        if (update.content.type !== 'text') return;
        const thought: StreamPayload<'thought.chunk'> = { role: 'assistant', content: update.content.text };
        this.events.emit('thought.chunk', thought);
        return;
      }
      case 'plan': {
        const plan: StreamPayload<'plan'> = {
          entries: update.entries.map((e) => ({ content: e.content, priority: e.priority, status: e.status })),
        };
        this.events.emit('plan', plan);
        return;
      }
      case 'usage_update': {
        const cost = update.cost != null ? { amount: update.cost.amount, currency: update.cost.currency } : undefined;
        const usage: StreamPayload<'usage'> = { context_used: update.used, context_size: update.size, ...definedFields({ cost }) };
        this.events.emit('usage', usage);
        this.context = { ...this.context, context_used: update.used, context_size: update.size, ...definedFields({ cost }) };
        return;
      }
      case 'tool_call': {
        // What the agent says after a tool call is a new message: the final one is the last.
        this.finalText = '';
        // A tool_call announces the call afresh: nothing heard of it before stays.
        this.tools.set(update.toolCallId, {});
        this.hear(update);
        const seen = this.seen(update.toolCallId);
        this.events.emit('tool.call', {
          call: update.toolCallId,
          name: seen.title,
          title: seen.title,
          kind: seen.kind,
          arguments: update.rawInput ?? {},
          status: 'dispatched',
          ...faithful(update),
        });
        if (update.status === 'completed' || update.status === 'failed') this.result(update.toolCallId, update.status, update);
        return;
      }
      case 'tool_call_update': {
        this.hear(update);
        if (update.status === 'completed' || update.status === 'failed') this.result(update.toolCallId, update.status, update);
        return;
      }
      default:
        return;
    }
  }

  /** Takes in what `update` gives of its call: a field given replaces, an absent (or null) one stays; an empty title is none. */
  private hear(update: ToolCallUpdate): void {
    const heard = this.tools.get(update.toolCallId) ?? {};
    this.tools.set(update.toolCallId, {
      ...heard,
      ...definedFields({ title: update.title || undefined, kind: update.kind ?? undefined, rawInput: update.rawInput ?? undefined }),
    });
  }

  private seen(call: string): ToolSeen {
    const { title, kind, rawInput } = this.tools.get(call) ?? {};
    return { title: title ?? call, kind: kind ?? 'other', ...definedFields({ rawInput }) };
  }

  private result(
    call: string,
    status: 'completed' | 'failed',
    update: { content?: ToolCallContent[] | null; locations?: ToolCallLocation[] | null; rawOutput?: unknown },
  ): void {
    const seen = this.seen(call);
    const ok = status === 'completed';
    this.events.emit('tool.result', {
      call,
      name: seen.title,
      title: seen.title,
      kind: seen.kind,
      status: ok ? 'succeeded' : 'failed',
      ok,
      ...streamToolContent(toolText(update)),
      ...faithful(update),
    });
  }
}

/** The call's diffs (with its text) and locations as the agent gave them, for the ACP face to pass on. */
function faithful(update: { content?: ToolCallContent[] | null; locations?: ToolCallLocation[] | null }) {
  return definedFields({ acp_content: keptToolContent(update.content), locations: keptLocations(update.locations) });
}

/** A tool call's output as text: its text content, a line per diff, else its raw output. */
function toolText(update: { content?: ToolCallContent[] | null; rawOutput?: unknown }): string {
  const parts: string[] = [];
  for (const c of update.content ?? []) {
    if (c.type === 'content' && c.content.type === 'text') parts.push(c.content.text);
    else if (c.type === 'diff') parts.push(`diff ${c.path}`);
  }
  if (parts.length > 0) return parts.join('\n');
  const raw = update.rawOutput;
  if (raw === undefined || raw === null) return '';
  return typeof raw === 'string' ? raw : JSON.stringify(raw);
}

/** The `usage` of a prompt result (an ACP field newer than the SDK's stable schema): the turn's tokens. */
const PromptUsage = z.object({
  usage: z.object({
    inputTokens: z.number(),
    outputTokens: z.number(),
    totalTokens: z.number(),
    thoughtTokens: z.number().nullish(),
    cachedReadTokens: z.number().nullish(),
    cachedWriteTokens: z.number().nullish(),
  }),
});

type TurnTokens = Pick<
  RunUsage,
  'input_tokens' | 'output_tokens' | 'total_tokens' | 'thought_tokens' | 'cached_read_tokens' | 'cached_write_tokens'
>;

/** The turn's tokens from a prompt result, or nothing when the agent did not say them. */
export function promptUsage(result: unknown): TurnTokens {
  const parsed = PromptUsage.safeParse(result);
  if (!parsed.success) return {};
  const u = parsed.data.usage;
  return {
    input_tokens: u.inputTokens,
    output_tokens: u.outputTokens,
    total_tokens: u.totalTokens,
    ...definedFields({
      thought_tokens: u.thoughtTokens ?? undefined,
      cached_read_tokens: u.cachedReadTokens ?? undefined,
      cached_write_tokens: u.cachedWriteTokens ?? undefined,
    }),
  };
}
