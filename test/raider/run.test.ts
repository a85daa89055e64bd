// Whole runs of the real raider with the scripted engine: the stream-json
// v1 events and their order, --json and plain output.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamEvent as StreamEventSchema } from '../../src/protocol/raider-stream.js';
import { cleanEnv, cleanUp, ensureBuilt, makeProject, parseEvents, runRaider, eventTypes, runTypes } from './helpers.js';

beforeAll(ensureBuilt, 120_000);
afterAll(cleanUp);

const TWO_TOOLS = `
replies:
  - match: "^greet"
    steps:
      - tool: list_dir
        arguments: { path: "docs" }
      - tool: read_file
        arguments: { path: "docs/note.txt" }
      - message: "Hello, {{mission}}"
  - match: "explode"
    steps:
      - tool: read_file
        arguments: { path: "../../etc/passwd" }
      - fail: "the engine gave up on {{mission}}"
  - match: "loop"
    steps:
      - tool: list_dir
      - tool: list_dir
      - tool: list_dir
      - message: "never"
  - match: "big"
    steps:
      - tool: read_file
        arguments: { path: "big.txt" }
      - message: "read it"
  - steps:
      - message: "I heard: {{mission}}"
`;

const BIG = 'é'.repeat(1500);

function project(): string {
  return makeProject(TWO_TOOLS, { 'docs/note.txt': 'a note\n', 'docs/sub/x': '', 'big.txt': BIG });
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

describe('a completed run with two tool calls', () => {
  it('writes the nine events of docs/raider.md (Events), canonical, numbered and timed', async () => {
    const root = project();
    const r = await runRaider(['--stream-json', '--engine', 'scripted', '--root', root, '--', 'greet the team']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    const events = parseEvents(r.stdout);
    expect(eventTypes(events)).toEqual(runTypes('completed', 'tool.call', 'tool.result', 'tool.call', 'tool.result', 'message'));
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const [i, e] of events.entries()) {
      expect(e.version).toBe(1);
      expect(typeof e.time).toBe('number');
      if (i > 0) expect(e.time).toBeGreaterThanOrEqual(events[i - 1]!.time);
      // Sorted keys, compact: re-serialising with sorted keys gives the same line.
      expect(lines[i]).toBe(JSON.stringify(sortKeys(e)));
    }
    expect(events[0]).toMatchObject({ engine: 'scripted' });
    expect(events[0]).not.toHaveProperty('model');
    expect(events[2]).toMatchObject({ call: 'c1', name: 'list_dir', arguments: { path: 'docs' }, status: 'dispatched' });
    expect(events[3]).toMatchObject({
      call: 'c1',
      name: 'list_dir',
      status: 'succeeded',
      ok: true,
      content: 'note.txt\nsub/',
      size: 13,
      truncated: false,
    });
    expect(events[4]).toMatchObject({ call: 'c2', name: 'read_file', arguments: { path: 'docs/note.txt' } });
    expect(events[5]).toMatchObject({ call: 'c2', status: 'succeeded', ok: true, content: 'a note\n', size: 7 });
    expect(events[6]).toMatchObject({ role: 'assistant', content: 'Hello, greet the team' });
    const finished = events[8]!;
    expect(finished).toMatchObject({
      status: 'completed',
      response: 'Hello, greet the team',
      metrics: { raids: 1, iterations: 3, tool_calls: 2 },
    });
    expect(typeof finished.elapsed).toBe('number');
    const session = finished.session as { id: string; path: string };
    expect(session.id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/);
    expect(session.path).toBe(`${root}/.raider/sessions/${session.id}.jsonl`);
    expect(finished).not.toHaveProperty('error');
    expect(r.stderr).toBe('');
  });

  it("writes only events of the protocol's stream schema, each with exactly its fields", async () => {
    const runs = await Promise.all([
      runRaider(['--stream-json', '-e', 'scripted', '-m', 'tiny-1', '-r', project(), '--', 'greet the team']),
      runRaider(['--stream-json', '-e', 'scripted', '-r', project(), '--no-session', '--', 'explode now']),
      runRaider(['--stream-json', '-e', 'scripted', '-r', project(), '--no-session', '--', 'big file']),
    ]);
    const seen = new Set<string>();
    for (const r of runs) {
      for (const line of r.stdout.split('\n').filter(Boolean)) {
        const event: unknown = JSON.parse(line);
        // z.object drops fields it does not know: equal means no field is missing, extra or mistyped.
        expect(StreamEventSchema.parse(event)).toEqual(event);
        seen.add(StreamEventSchema.parse(event).type);
      }
    }
    expect([...seen].sort()).toEqual(['message', 'run.finished', 'run.started', 'run.state', 'tool.call', 'tool.result']);
  });

  it('names the model when one is given', async () => {
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-m', 'tiny-1', '-r', project(), '--no-session', '--', 'hi']);
    expect(parseEvents(r.stdout)[0]).toMatchObject({ type: 'run.started', engine: 'scripted', model: 'tiny-1' });
  });
});

describe('failures', () => {
  it('a failing script: tool events, then failed, exit 1; an escaping path is a failed tool result', async () => {
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', project(), '--', 'explode now']);
    expect(r.code).toBe(1);
    const events = parseEvents(r.stdout);
    expect(eventTypes(events)).toEqual(runTypes('failed', 'tool.call', 'tool.result'));
    expect(events[3]).toMatchObject({ status: 'failed', ok: false });
    expect(String(events[3]!.content)).toMatch(/outside the project root/);
    expect(events[5]).toMatchObject({ status: 'failed', error: 'the engine gave up on explode now' });
    expect(events[5]).not.toHaveProperty('response');
    expect(events[5]).not.toHaveProperty('metrics');
  });

  it('--max-iterations caps tool rounds and fails the run', async () => {
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', project(), '--max-iterations', '2', '--', 'loop']);
    expect(r.code).toBe(1);
    const events = parseEvents(r.stdout);
    expect(events.filter((e) => e.type === 'tool.call')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: 'run.finished', status: 'failed' });
    expect(String(events.at(-1)!.error)).toMatch(/--max-iterations/);
  });

  it('a mission no reply matches fails the run', async () => {
    const root = makeProject('replies:\n  - match: "^only this$"\n    steps: [ { message: "x" } ]\n');
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', root, '--no-session', '--', 'something else']);
    expect(r.code).toBe(1);
    expect(parseEvents(r.stdout).at(-1)).toMatchObject({ status: 'failed' });
  });
});

describe('tool results in the stream', () => {
  it('are cut to 1000 characters, with the full size and truncated:true', async () => {
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', project(), '--', 'big file']);
    expect(r.code).toBe(0);
    const events = parseEvents(r.stdout);
    const result = events.find((e) => e.type === 'tool.result')!;
    expect(result).toMatchObject({ size: 1500, truncated: true, ok: true });
    expect(result.content).toBe('é'.repeat(1000));
    // ...while the journal keeps the whole text.
    const session = events.at(-1)!.session as { path: string };
    const journal = readFileSync(session.path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const full = journal.find((j) => j.type === 'tool.result')!;
    expect(full.content).toBe(BIG);
    expect(full.size).toBe(1500);
  });
});

describe('other outputs', () => {
  it('--json writes one pretty canonical document at the end', async () => {
    const r = await runRaider(['--json', '-e', 'scripted', '-r', project(), '--no-session', '--', 'just', 'say', 'it']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({ version: 1, status: 'completed', response: 'I heard: just say it' });
    expect(doc).not.toHaveProperty('session');
    expect(r.stdout).toBe(`${JSON.stringify(sortKeys(doc), null, 2)}\n`);
  });

  it('without a machine flag prints the answer, and the session note on stderr', async () => {
    const r = await runRaider(['-e', 'scripted', '-r', project(), '--', 'hello']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('I heard: hello\n');
    expect(r.stderr).toMatch(/^session \d{8}-\d{6}-[0-9a-f]{4} \(/);
  });

  it('-o engine=scripted and RAIDER_SCRIPT select the engine and the script', async () => {
    const root = makeProject(undefined, { 'alt.yml': 'replies:\n  - steps: [ { message: "alt {{mission}}" } ]\n' });
    const r = await runRaider(['--stream-json', '-o', 'engine=scripted', '-r', root, '--no-session', '--', 'm'], {
      env: cleanEnv({ RAIDER_SCRIPT: 'alt.yml' }),
    });
    expect(r.code).toBe(0);
    expect(parseEvents(r.stdout).at(-1)).toMatchObject({ response: 'alt m' });
  });
});
