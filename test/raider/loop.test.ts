// The agent loop in-process, with a stand-in engine and tools, for what a
// script cannot reach: a tool cut off by a cancel, a tool that throws or
// ignores its signal, an engine asking for a tool that does not exist.
import { afterAll, describe, expect, it } from 'vitest';
import type { Engine, HistoryEntry, Turn } from '../../src/raider/engines/engine.js';
import { runAgentLoop, type ToolOutcome } from '../../src/raider/loop.js';
import type { Tool } from '../../src/raider/tools/tool.js';
import { defaultTools } from '../../src/raider/tools/index.js';
import { ProcessGroups } from '../../src/raider/tools/process-groups.js';
import { cleanUp, makeProject } from './helpers.js';

afterAll(cleanUp);

/** Plays turns in order; the last one repeats. */
function engineOf(...turns: Turn[]): Engine {
  let i = 0;
  return {
    name: 'fake',
    model: undefined,
    async nextTurn() {
      return turns[Math.min(i++, turns.length - 1)]!;
    },
  };
}

function tool(name: string, run: Tool['run']): Tool {
  return {
    spec: { name, description: name, parameters: {} },
    access: () => ({ category: 'read', kind: 'read', title: name, family: name }),
    run,
  };
}

/** What every loop needs besides the engine and tools. */
const plumbing = (): { processes: ProcessGroups; env: NodeJS.ProcessEnv } => ({ processes: new ProcessGroups(), env: process.env });

function record(): { calls: string[]; results: ToolOutcome[]; sink: Parameters<typeof runAgentLoop>[0]['sink'] } {
  const calls: string[] = [];
  const results: ToolOutcome[] = [];
  return { calls, results, sink: { toolCall: (c) => calls.push(`${c.id}:${c.name}`), toolResult: (r) => results.push(r) } };
}

const call = (name: string, args: Record<string, unknown> = {}): Turn => ({ kind: 'tools', calls: [{ name, arguments: args }] });

describe('runAgentLoop', () => {
  it('a cancel cuts off the running tool: tool.result cancelled, run cancelled', async () => {
    const controller = new AbortController();
    const rec = record();
    // A tool that never finishes by itself and ignores its signal.
    const stuck = tool('stuck', () => new Promise(() => {}));
    const history: HistoryEntry[] = [{ role: 'user', content: 'go' }];
    const outcome = runAgentLoop({
      engine: engineOf(call('stuck'), { kind: 'final', text: 'never' }),
      tools: new Map([['stuck', stuck]]),
      root: '/',
      history,
      maxIterations: 10,
      ...plumbing(),
      signal: controller.signal,
      sink: {
        ...rec.sink,
        toolCall: (c) => {
          rec.sink.toolCall(c);
          setTimeout(() => controller.abort(), 10);
        },
      },
    });
    expect(await outcome).toMatchObject({ status: 'cancelled' });
    expect(rec.calls).toEqual(['c1:stuck']);
    expect(rec.results).toEqual([{ call: 'c1', name: 'stuck', status: 'cancelled', ok: false, content: 'cancelled' }]);
  });

  it('a cancel before the first turn makes no model call', async () => {
    const controller = new AbortController();
    controller.abort();
    let asked = 0;
    const engine: Engine = {
      name: 'x',
      model: undefined,
      nextTurn: async () => {
        asked++;
        return { kind: 'final', text: 'x' };
      },
    };
    const outcome = await runAgentLoop({
      engine,
      tools: new Map(),
      root: '/',
      history: [],
      maxIterations: 1,
      ...plumbing(),
      signal: controller.signal,
      sink: record().sink,
    });
    expect(outcome.status).toBe('cancelled');
    expect(asked).toBe(0);
  });

  it('unknown tools and throwing tools are failed results, not a crashed run', async () => {
    const rec = record();
    const boom = tool('boom', async () => {
      throw new Error('kaput');
    });
    const outcome = await runAgentLoop({
      engine: engineOf(call('nope'), call('boom'), { kind: 'final', text: 'done anyway' }),
      tools: new Map([['boom', boom]]),
      root: '/',
      history: [{ role: 'user', content: 'go' }],
      maxIterations: 10,
      ...plumbing(),
      signal: new AbortController().signal,
      sink: rec.sink,
    });
    expect(outcome).toMatchObject({ status: 'completed', response: 'done anyway', counts: { iterations: 3, toolCalls: 2 } });
    expect(rec.results.map((r) => [r.call, r.status, r.ok, r.content])).toEqual([
      ['c1', 'failed', false, "unknown tool 'nope'"],
      ['c2', 'failed', false, 'kaput'],
    ]);
  });

  it('file tools stay inside the root, also through symlinks', async () => {
    const root = makeProject(undefined, { 'in.txt': 'inside' });
    const { symlinkSync } = await import('node:fs');
    symlinkSync('/etc', `${root}/escape`);
    const rec = record();
    const outcome = await runAgentLoop({
      engine: engineOf(
        call('read_file', { path: 'in.txt' }),
        call('read_file', { path: '/etc/hostname' }),
        call('list_dir', { path: 'escape' }),
        call('read_file', { path: 'missing.txt' }),
        call('read_file', {}),
        { kind: 'final', text: 'ok' },
      ),
      tools: defaultTools(),
      root,
      history: [{ role: 'user', content: 'go' }],
      maxIterations: 10,
      ...plumbing(),
      signal: new AbortController().signal,
      sink: rec.sink,
    });
    expect(outcome.status).toBe('completed');
    expect(rec.results.map((r) => r.ok)).toEqual([true, false, false, false, false]);
    expect(rec.results[0]!.content).toBe('inside');
    expect(rec.results[1]!.content).toMatch(/outside the project root/);
    expect(rec.results[2]!.content).toMatch(/outside the project root/);
    expect(rec.results[3]!.content).toMatch(/ENOENT/);
    expect(rec.results[4]!.content).toMatch(/argument 'path'/);
  });
});
