/**
 * The real engines (anthropic, openai) on top of the AI SDK: one streamed
 * model call per turn, with the loop's tools offered but not executed by
 * the SDK (no `execute`), so the raider's loop keeps running the tools
 * itself — with its permissions, events, journal and cancel handling.
 * The SDK does the wire formats, retries and message conversion.
 */
import { APICallError, jsonSchema, RetryError, streamText, tool, type LanguageModel, type ModelMessage, type ToolSet } from 'ai';
import { errorMessage } from '../errors.js';
import type { Engine, HistoryEntry, RequestedCall, ToolSpec, Turn, TurnContext, TurnTokens } from './engine.js';
import { isRecord } from '../../domain/records.js';
import { definedFields } from '../../domain/defined-fields.js';

export interface ModelSettings {
  /** Retries of a failed call (the SDK backs off exponentially); 2 unless `-o max_retries=`. */
  maxRetries: number;
  maxOutputTokens?: number;
  temperature?: number;
}

export class AiSdkEngine implements Engine {
  constructor(
    readonly name: string,
    readonly model: string,
    private readonly languageModel: LanguageModel,
    private readonly settings: ModelSettings,
    /** Where the calls go, for error messages. */
    private readonly url: string,
  ) {}

  async nextTurn(history: readonly HistoryEntry[], ctx: TurnContext): Promise<Turn> {
    let failure: unknown;
    const result = streamText({
      model: this.languageModel,
      system: ctx.system,
      messages: toModelMessages(history),
      tools: toToolSet(ctx.tools),
      abortSignal: ctx.signal,
      maxRetries: this.settings.maxRetries,
      ...definedFields({ maxOutputTokens: this.settings.maxOutputTokens, temperature: this.settings.temperature }),
      // The SDK would print errors with console.error; they are ours to report.
      onError: ({ error }) => {
        failure ??= error;
      },
    });

    let text = '';
    const calls: RequestedCall[] = [];
    let tokens: TurnTokens = {};
    try {
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') text += part.text;
        else if (part.type === 'tool-call') calls.push(requestedCall(part.toolName, part.input));
        else if (part.type === 'error') failure ??= part.error;
        else if (part.type === 'finish')
          tokens = definedFields({
            input_tokens: part.totalUsage.inputTokens,
            output_tokens: part.totalUsage.outputTokens,
            total_tokens: part.totalUsage.totalTokens,
          });
      }
    } catch (err) {
      failure ??= err;
    }
    // An aborted call is the loop's business (cancelled), not a failure.
    if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error('aborted');
    if (failure !== undefined) throw new Error(describeModelError(this.name, this.url, failure));
    const said = Object.keys(tokens).length > 0 ? { tokens } : {};
    if (calls.length > 0) return text ? { kind: 'tools', calls, text, ...said } : { kind: 'tools', calls, ...said };
    return { kind: 'final', text, ...said };
  }
}

/** The loop's history as AI SDK messages; consecutive tool results go into one message. */
export function toModelMessages(history: readonly HistoryEntry[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const entry of history) {
    if (entry.role === 'user') {
      out.push({ role: 'user', content: entry.content });
    } else if (entry.role === 'assistant' && 'toolCalls' in entry) {
      out.push({
        role: 'assistant',
        content: [
          ...(entry.text ? [{ type: 'text' as const, text: entry.text }] : []),
          ...entry.toolCalls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.arguments })),
        ],
      });
    } else if (entry.role === 'assistant') {
      // Anthropic refuses an empty text block; an empty answer adds nothing to the conversation.
      if (entry.content !== '') out.push({ role: 'assistant', content: entry.content });
    } else {
      const part = {
        type: 'tool-result' as const,
        toolCallId: entry.callId,
        toolName: entry.name,
        output: entry.ok ? { type: 'text' as const, value: entry.content } : { type: 'error-text' as const, value: entry.content },
      };
      const last = out.at(-1);
      if (last && last.role === 'tool') last.content.push(part);
      else out.push({ role: 'tool', content: [part] });
    }
  }
  return out;
}

function toToolSet(specs: readonly ToolSpec[]): ToolSet {
  const set: ToolSet = {};
  for (const spec of specs) {
    // No `execute`: the SDK stops after the call and hands it to us.
    set[spec.name] = tool({ description: spec.description, inputSchema: jsonSchema(spec.parameters) });
  }
  return set;
}

/**
 * The SDK hands over arguments it could not parse as the raw text; small
 * local models do that now and then. The model is then told so, rather
 * than the tool complaining about missing arguments.
 */
function requestedCall(name: string, input: unknown): RequestedCall {
  if (isRecord(input)) return { name, arguments: input };
  if (typeof input === 'string' && input.trim() !== '') {
    return { name, arguments: {}, problem: `the arguments were not a JSON object: ${input.slice(0, 200)}` };
  }
  return { name, arguments: {} };
}

/**
 * One line a user can act on: which engine, which URL, what went wrong.
 * Never includes request headers, so no API key can leak into the
 * document or the journal.
 */
export function describeModelError(engine: string, url: string, err: unknown): string {
  const last = RetryError.isInstance(err) ? err.lastError : err;
  const attempts = RetryError.isInstance(err) ? ` (after ${err.errors.length} attempts)` : '';
  if (APICallError.isInstance(last)) {
    if (last.statusCode === undefined) {
      const cause = last.cause instanceof Error ? last.cause : undefined;
      // fetch's own error ("fetch failed") says why in its cause (ECONNREFUSED ...).
      const detail = cause ? errorMessage(cause.cause ?? cause) : last.message;
      return `${engine} engine: cannot reach ${url}${attempts}: ${detail}`;
    }
    return `${engine} engine: ${url} answered HTTP ${last.statusCode}${attempts}: ${last.message}`;
  }
  return `${engine} engine (${url}): ${errorMessage(last)}${attempts}`;
}
