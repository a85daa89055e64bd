/**
 * The agent loop: ask the engine for a turn, run the tools it asks for,
 * feed the results back, until the engine gives a final answer, fails, the
 * tool-round budget runs out, or the run's signal is aborted (cancel or
 * interrupt). It reports tool calls and results to a sink as they happen;
 * the caller decides what to write where (stream, journal).
 */
import { errorMessage } from './errors.js';
import type { Engine, HistoryEntry, ToolCallEntry, TurnTokens } from './engines/engine.js';
import type { ToolGate } from './permissions/gate.js';
import type { ProcessGroups } from './tools/process-groups.js';
import type { Tool, ToolContext } from './tools/tool.js';

export type ToolStatus = 'succeeded' | 'failed' | 'cancelled';

export interface ToolOutcome {
  call: string;
  name: string;
  status: ToolStatus;
  ok: boolean;
  content: string;
}

export interface LoopSink {
  toolCall(call: ToolCallEntry): void;
  toolResult(result: ToolOutcome): void;
}

export interface LoopCounts {
  /** Engine turns (model calls). */
  iterations: number;
  toolCalls: number;
  /** The tokens of the model calls, summed, as far as the engine said them. */
  tokens?: TurnTokens;
}

export type LoopOutcome =
  | { status: 'completed'; response: string; counts: LoopCounts }
  | { status: 'failed'; error: string; counts: LoopCounts }
  | { status: 'cancelled'; counts: LoopCounts };

export interface LoopInput {
  engine: Engine;
  tools: ReadonlyMap<string, Tool>;
  root: string;
  /** The conversation so far, ending with the current mission; the loop appends to it. */
  history: HistoryEntry[];
  /** Cap on tool rounds; asking for one more fails the run. */
  maxIterations: number;
  signal: AbortSignal;
  sink: LoopSink;
  /** The system prompt for every model call. */
  system?: string;
  /** Asked before every tool call; without one every call is allowed (tests, trusted setups). */
  gate?: ToolGate;
  processes: ProcessGroups;
  /** The environment tool processes get. */
  env: NodeJS.ProcessEnv;
}

const ABORTED = Symbol('aborted');

export async function runAgentLoop(input: LoopInput): Promise<LoopOutcome> {
  const { engine, tools, history, signal, sink } = input;
  const counts: LoopCounts = { iterations: 0, toolCalls: 0 };
  const specs = [...tools.values()].map((t) => t.spec);
  let rounds = 0;

  try {
    for (;;) {
      // A cancel before a model call ends the run without making the call.
      if (signal.aborted) return { status: 'cancelled', counts };
      counts.iterations++;
      const turn = await engine.nextTurn(history, { signal, tools: specs, system: input.system ?? '' });
      if (turn.tokens !== undefined) counts.tokens = addTokens(counts.tokens ?? {}, turn.tokens);
      if (signal.aborted) return { status: 'cancelled', counts };

      if (turn.kind === 'final') {
        history.push({ role: 'assistant', content: turn.text });
        return { status: 'completed', response: turn.text, counts };
      }
      if (rounds >= input.maxIterations) {
        return {
          status: 'failed',
          error: `stopped after ${input.maxIterations} tool round(s) (--max-iterations) without a final answer`,
          counts,
        };
      }
      rounds++;

      const problems = new Map<string, string>();
      const calls: ToolCallEntry[] = turn.calls.map((c) => {
        const id = `c${++counts.toolCalls}`;
        if (c.problem !== undefined) problems.set(id, c.problem);
        return { id, name: c.name, arguments: c.arguments };
      });
      history.push(turn.text ? { role: 'assistant', toolCalls: calls, text: turn.text } : { role: 'assistant', toolCalls: calls });
      // One after another, so each result belongs to the call just announced.
      for (const call of calls) {
        if (signal.aborted) return { status: 'cancelled', counts };
        sink.toolCall(call);
        const problem = problems.get(call.id);
        const outcome: ToolOutcome =
          problem !== undefined
            ? { call: call.id, name: call.name, status: 'failed', ok: false, content: problem }
            : await runTool(call, tools, input, { root: input.root, signal, processes: input.processes, env: input.env });
        sink.toolResult(outcome);
        history.push({ role: 'tool', callId: call.id, name: call.name, ok: outcome.ok, content: outcome.content });
        if (outcome.status === 'cancelled') return { status: 'cancelled', counts };
      }
    }
  } catch (err) {
    // An engine rejecting because of the abort is a cancel, not a failure.
    if (signal.aborted) return { status: 'cancelled', counts };
    return { status: 'failed', error: errorMessage(err), counts };
  }
}

async function runTool(call: ToolCallEntry, tools: ReadonlyMap<string, Tool>, input: LoopInput, ctx: ToolContext): Promise<ToolOutcome> {
  const base = { call: call.id, name: call.name };
  const { signal } = ctx;
  const tool = tools.get(call.name);
  if (!tool) return { ...base, status: 'failed', ok: false, content: `unknown tool '${call.name}'` };

  // The tool gets the signal too, but a tool that ignores it must not hold
  // the run: the race lets the cancel win at once.
  let settleAborted: (value: typeof ABORTED) => void = () => {};
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    settleAborted = resolve;
  });
  const onAbort = (): void => settleAborted(ABORTED);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (input.gate) {
      const verdict = await Promise.race([input.gate.check(call, tool, signal), aborted]);
      if (verdict === ABORTED || signal.aborted) return { ...base, status: 'cancelled', ok: false, content: 'cancelled' };
      // The model is told why, and the run goes on.
      if (!verdict.allowed) return { ...base, status: 'failed', ok: false, content: `permission refused: ${verdict.reason}` };
    }
    const result = await Promise.race([tool.run(call.arguments, ctx), aborted]);
    if (result === ABORTED) return { ...base, status: 'cancelled', ok: false, content: 'cancelled' };
    return { ...base, status: result.ok ? 'succeeded' : 'failed', ok: result.ok, content: result.content };
  } catch (err) {
    if (signal.aborted) return { ...base, status: 'cancelled', ok: false, content: 'cancelled' };
    return { ...base, status: 'failed', ok: false, content: errorMessage(err) };
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Two calls' tokens together: a count either said, summed. */
function addTokens(a: TurnTokens, b: TurnTokens): TurnTokens {
  const sum: TurnTokens = { ...a };
  for (const key of ['input_tokens', 'output_tokens', 'total_tokens'] as const) {
    const n = b[key];
    if (n !== undefined) sum[key] = (sum[key] ?? 0) + n;
  }
  return sum;
}
