/**
 * The seam between the agent loop and a model. The loop owns the history
 * and runs the tools; an engine only answers "what next?" for a history.
 * Keeping engines stateless over the history lets a resumed session (whose
 * history is rebuilt from the journal) continue with any engine, and lets
 * real engines (anthropic, openai) slot in behind the same interface.
 */

/** A tool the loop offers to the engine. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** A tool call the engine asks for; `id` is the loop's call id (`c1`, `c2`, …). */
export interface ToolCallEntry {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** The conversation as the loop keeps it. */
export type HistoryEntry =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string }
  /** A tool round; `text` is what the model said alongside the calls, if anything. */
  | { role: 'assistant'; toolCalls: ToolCallEntry[]; text?: string }
  | { role: 'tool'; callId: string; name: string; ok: boolean; content: string };

/** A tool call as the model asked for it. */
export interface RequestedCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Set when the model's arguments could not be read (not JSON): the call fails with this, unrun. */
  problem?: string;
}

/** What the engine wants next: run these tools, or here is the final answer. */
/** The tokens one model call used, as the model's API said them; a count it did not say is absent. */
export interface TurnTokens {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
}

export type Turn = ({ kind: 'tools'; calls: RequestedCall[]; text?: string } | { kind: 'final'; text: string }) & { tokens?: TurnTokens };

export interface TurnContext {
  /** Aborted on cancel or interrupt; an engine must stop waiting at once. */
  signal: AbortSignal;
  tools: readonly ToolSpec[];
  /** The system prompt: base instructions plus the packs. */
  system: string;
}

export interface Engine {
  /** The name reported in `run.started.engine`. */
  readonly name: string;
  /** The model reported in `run.started.model`, when one is known. */
  readonly model: string | undefined;
  /**
   * The next turn for this history (whose last user entry is the current
   * mission). Throwing fails the run with the error's message; rejecting
   * because `signal` was aborted ends it as cancelled.
   */
  nextTurn(history: readonly HistoryEntry[], ctx: TurnContext): Promise<Turn>;
}

/** The entries of the current run: everything after the last user message. */
export function currentRunEntries(history: readonly HistoryEntry[]): readonly HistoryEntry[] {
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]?.role === 'user') return history.slice(i);
  }
  return history;
}
