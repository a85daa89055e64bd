/**
 * The `scripted` engine: plays the model's part from a YAML script (format
 * in script-file.ts), offline. Like a real model it is stateless: where it
 * is in its reply is read off the history (how many tool rounds the current
 * run has had), so a resumed session replays nothing by mistake.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { currentRunEntries, type Engine, type HistoryEntry, type Turn, type TurnContext } from './engine.js';
import type { Script, ScriptReply, ScriptStep } from './script-file.js';

export class ScriptedEngine implements Engine {
  readonly name = 'scripted';

  constructor(
    private readonly script: Script,
    readonly model: string | undefined,
  ) {}

  async nextTurn(history: readonly HistoryEntry[], ctx: TurnContext): Promise<Turn> {
    const run = currentRunEntries(history);
    const first = run[0];
    const mission = first && first.role === 'user' ? first.content : '';
    const vars = { mission, turn: String(history.filter((e) => e.role === 'user').length) };

    const reply = this.replyFor(mission);
    const roundsDone = run.filter((e) => e.role === 'assistant' && 'toolCalls' in e).length;

    for (const step of stepsAfterRound(reply.steps, roundsDone)) {
      if ('sleep' in step) {
        // Aborting rejects at once with an AbortError: the loop turns that into cancelled.
        await sleep(step.sleep * 1000, undefined, { signal: ctx.signal });
      } else if ('tool' in step) {
        return { kind: 'tools', calls: [{ name: step.tool, arguments: fillTemplates(step.arguments, vars) }] };
      } else if ('message' in step) {
        return { kind: 'final', text: fill(step.message, vars) };
      } else {
        throw new Error(fill(step.fail, vars));
      }
    }
    throw new Error(`script ${this.script.file}: the reply ran out of steps without a message`);
  }

  private replyFor(mission: string): ScriptReply {
    const reply = this.script.replies.find((r) => r.match === undefined || r.match.test(mission));
    if (!reply) throw new Error(`script ${this.script.file} has no reply for this mission`);
    return reply;
  }
}

/** The steps that follow the `rounds`-th tool step (all steps when rounds is 0). */
function stepsAfterRound(steps: readonly ScriptStep[], rounds: number): readonly ScriptStep[] {
  let seen = 0;
  for (const [i, step] of steps.entries()) {
    if (seen === rounds) return steps.slice(i);
    if ('tool' in step) seen++;
  }
  return [];
}

function fill(text: string, vars: Record<string, string>): string {
  return text.replace(/\{\{\s*(\w+)\s*\}\}/g, (all, name: string) => vars[name] ?? all);
}

function fillTemplates(args: Record<string, unknown>, vars: Record<string, string>): Record<string, unknown> {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return fill(v, vars);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(args) as Record<string, unknown>;
}
