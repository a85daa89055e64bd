// The real engines through the real raider, against fake model servers on
// loopback that speak the OpenAI chat-completions and the Anthropic
// messages streaming formats: tool-call rounds, errors, an unreachable
// server, a cancel during a model call, and which engine and key are used.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toModelMessages } from '../../src/raider/engines/ai-sdk.js';
import { startFakeLlm, type FakeDialect, type FakeLlm, type FakeReply } from './fake-llm.js';
import { cleanEnv, cleanUp, ensureBuilt, makeProject, parseEvents, runRaider, startRaider, eventTypes, runTypes } from './helpers.js';

beforeAll(ensureBuilt, 120_000);
afterAll(cleanUp);

// The tests run concurrently (each is a raider process waiting on its own fake
// server): the fake servers close when the file is done, not after each test.
const fakes: FakeLlm[] = [];
afterAll(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

async function fake(dialect: FakeDialect, replies: FakeReply[]): Promise<FakeLlm> {
  const f = await startFakeLlm(dialect, replies);
  fakes.push(f);
  return f;
}

/** The argv of a streamed openai run against `url` in `root` without a session; `flags` go before the root. */
function openaiArgs(url: string, root: string, mission: string, ...flags: string[]): string[] {
  return ['--stream-json', '-e', 'openai', '-o', `url=${url}`, ...flags, '-r', root, '--no-session', '--', mission];
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const KEYS = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;

for (const dialect of ['openai', 'anthropic'] as const) {
  describe.concurrent(`the ${dialect} engine`, () => {
    it('runs a tool-call round and answers; the stream, the request and the journal show it', async () => {
      const llm = await fake(dialect, [
        { text: 'Let me read it.', tools: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
        { text: 'The note says: hello raider' },
      ]);
      const root = makeProject(undefined, { 'notes.txt': 'hello raider\n' });
      const secret = `sk-${dialect}-secret-123`;
      const r = await runRaider(
        ['--stream-json', '-e', dialect, '-m', 'model-x', '-o', `url=${llm.url}`, '-r', root, '--', 'what does the note say?'],
        {
          env: cleanEnv({ [KEYS[dialect]]: secret }),
        },
      );
      expect(r.stderr).not.toMatch(/error/i);
      expect(r.code).toBe(0);
      const events = parseEvents(r.stdout);
      expect(eventTypes(events)).toEqual(runTypes('completed', 'tool.call', 'tool.result', 'message'));
      expect(events[0]).toMatchObject({ engine: dialect, model: 'model-x' });
      expect(events[2]).toMatchObject({ call: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } });
      expect(events[3]).toMatchObject({ call: 'c1', status: 'succeeded', ok: true, content: 'hello raider\n' });
      expect(events.at(-1)).toMatchObject({
        status: 'completed',
        response: 'The note says: hello raider',
        metrics: { iterations: 2, tool_calls: 1 },
        // The two calls' tokens as the model's API said them (the fake's: 10 in and 5 out each), summed.
        usage: { input_tokens: 20, output_tokens: 10, total_tokens: 30 },
      });

      // Two streamed calls; the second carries the tool result back under the loop's call id.
      expect(llm.requests).toHaveLength(2);
      const first = llm.requests[0]!;
      expect(first.body.stream).toBe(true);
      const second = JSON.stringify(llm.requests[1]!.body);
      expect(second).toContain('hello raider\\n');
      expect(second).toContain('"c1"');
      if (dialect === 'openai') {
        expect(first.headers.authorization).toBe(`Bearer ${secret}`);
        const tools = (first.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
        expect(tools).toEqual(['read_file', 'list_dir', 'write_file', 'edit_file', 'bash']);
        expect((first.body.messages as Array<{ role: string; content: string }>)[0]).toMatchObject({ role: 'system' });
      } else {
        expect(first.headers['x-api-key']).toBe(secret);
        const tools = (first.body.tools as Array<{ name: string }>).map((t) => t.name);
        expect(tools).toEqual(['read_file', 'list_dir', 'write_file', 'edit_file', 'bash']);
        expect(JSON.stringify(first.body.system)).toContain('You are raider');
      }

      // The journal has the whole run, and never the key.
      const session = events.at(-1)!.session as { path: string };
      const journal = readFileSync(session.path, 'utf8');
      expect(journal).not.toContain(secret);
      expect(r.stdout).not.toContain(secret);
      const recs = journal
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(recs.map((x) => x.type)).toEqual([
        'session.created',
        'run.started',
        'message',
        'tool.call',
        'tool.result',
        'message',
        'run.finished',
      ]);
    });

    it('resumes a session with the conversation so far', async () => {
      const llm = await fake(dialect, [{ text: 'first answer' }, { text: 'second answer' }]);
      const root = makeProject();
      const env = cleanEnv({ [KEYS[dialect]]: 'k' });
      const one = await runRaider(['--json', '-e', dialect, '-o', `url=${llm.url}`, '-r', root, '--', 'first question'], { env });
      const id = (JSON.parse(one.stdout) as { session: { id: string } }).session.id;
      const two = await runRaider(
        ['--json', '-e', dialect, '-o', `url=${llm.url}`, '-r', root, '--session', id.slice(-4), '--', 'second question'],
        { env },
      );
      expect(JSON.parse(two.stdout)).toMatchObject({ status: 'completed', response: 'second answer', session: { id } });
      const sent = JSON.stringify(llm.requests[1]!.body.messages);
      for (const text of ['first question', 'first answer', 'second question']) expect(sent).toContain(text);
      expect(sent.indexOf('first question')).toBeLessThan(sent.indexOf('first answer'));
      expect(sent.indexOf('first answer')).toBeLessThan(sent.indexOf('second question'));
    });

    it('an HTTP error from the server fails the run with the status in the error', async () => {
      const llm = await fake(dialect, [{ status: 400 }]);
      const r = await runRaider(['--stream-json', '-e', dialect, '-o', `url=${llm.url}`, '-r', makeProject(), '--no-session', '--', 'x'], {
        env: cleanEnv({ [KEYS[dialect]]: 'k' }),
      });
      expect(r.code).toBe(1);
      const finished = parseEvents(r.stdout).at(-1)!;
      expect(finished).toMatchObject({ type: 'run.finished', status: 'failed' });
      expect(String(finished.error)).toMatch(new RegExp(`^${dialect} engine: .* answered HTTP 400`));
    });

    it('SIGINT during a model call cancels at once and drops the request', async () => {
      const llm = await fake(dialect, [{ hang: true }]);
      const { child, done } = startRaider(
        ['--stream-json', '-e', dialect, '-o', `url=${llm.url}`, '-r', makeProject(), '--', 'think hard'],
        {
          env: cleanEnv({ [KEYS[dialect]]: 'k' }),
        },
      );
      await llm.waiting();
      const sent = Date.now();
      child.kill('SIGINT');
      const r = await done;
      expect(Date.now() - sent).toBeLessThan(3000);
      expect(r.signal).toBe('SIGINT');
      expect(eventTypes(parseEvents(r.stdout))).toEqual(runTypes('cancelled'));
      await new Promise((res) => setTimeout(res, 100));
      expect(llm.aborted).toBe(1);
    });
  });
}

describe.concurrent('SIGTERM during a model call', () => {
  it('ends the run interrupted with signal TERM', async () => {
    const llm = await fake('openai', [{ hang: true }]);
    const { child, done } = startRaider(['--stream-json', '-e', 'openai', '-o', `url=${llm.url}`, '-r', makeProject(), '--', 'think'], {
      env: cleanEnv({ OPENAI_API_KEY: 'k' }),
    });
    await llm.waiting();
    child.kill('SIGTERM');
    const r = await done;
    expect(r.signal).toBe('SIGTERM');
    expect(eventTypes(parseEvents(r.stdout))).toEqual(runTypes('interrupted'));
    expect(parseEvents(r.stdout).at(-1)).toMatchObject({ status: 'interrupted', signal: 'TERM' });
  });
});

describe.concurrent('a model that edits', () => {
  it('in acceptEdits mode writes and edits files, while bash is still refused', async () => {
    const llm = await fake('openai', [
      { tools: [{ name: 'write_file', arguments: { path: 'src/app.txt', content: 'colour = red\n' } }] },
      { tools: [{ name: 'edit_file', arguments: { path: 'src/app.txt', old_string: 'red', new_string: 'blue' } }] },
      { tools: [{ name: 'bash', arguments: { command: 'cat src/app.txt' } }] },
      { text: 'Set the colour to blue.' },
    ]);
    const root = makeProject();
    const r = await runRaider(openaiArgs(llm.url, root, 'make it blue', '--permission-mode', 'acceptEdits'));
    expect(r.code).toBe(0);
    expect(readFileSync(join(root, 'src/app.txt'), 'utf8')).toBe('colour = blue\n');
    const results = parseEvents(r.stdout).filter((e) => e.type === 'tool.result');
    expect(results.map((e) => [e.name, e.status])).toEqual([
      ['write_file', 'succeeded'],
      ['edit_file', 'succeeded'],
      ['bash', 'failed'],
    ]);
    expect(String(results[2]!.content)).toMatch(/acceptEdits mode asks before running commands/);
  });
});

describe.concurrent('an unreachable server', () => {
  it('fails the run with exit 1, naming the URL', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const r = await runRaider(openaiArgs(url, makeProject(), 'hello?', '-o', 'max_retries=0'));
    expect(r.code).toBe(1);
    const events = parseEvents(r.stdout);
    expect(eventTypes(events)).toEqual(runTypes('failed'));
    expect(events.at(-1)!.error).toMatch(new RegExp(`^openai engine: cannot reach ${url.replace(/[./]/g, '\\$&')}: .*ECONNREFUSED`));
  });
});

describe.concurrent('tool rounds and budgets', () => {
  it('--max-iterations ends a model that keeps calling tools as failed', async () => {
    const loop: FakeReply = { tools: [{ name: 'list_dir', arguments: {} }] };
    const llm = await fake('openai', [loop, loop, loop, loop]);
    const r = await runRaider(openaiArgs(llm.url, makeProject(), 'loop', '--max-iterations', '2'));
    expect(r.code).toBe(1);
    const events = parseEvents(r.stdout);
    expect(events.filter((e) => e.type === 'tool.result')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({
      status: 'failed',
      error: 'stopped after 2 tool round(s) (--max-iterations) without a final answer',
    });
  });

  it('several calls in one turn run one after another; a refused one tells the model why', async () => {
    const llm = await fake('openai', [
      {
        tools: [
          { name: 'list_dir', arguments: {} },
          { name: 'write_file', arguments: { path: 'x.txt', content: 'x' } },
        ],
      },
      { text: 'I could not write.' },
    ]);
    const root = makeProject(undefined, { 'a.txt': '' });
    const r = await runRaider(['--stream-json', '-e', 'openai', '-o', `url=${llm.url}`, '-r', root, '--no-session', '--', 'write']);
    expect(r.code).toBe(0);
    const events = parseEvents(r.stdout);
    expect(eventTypes(events)).toEqual(
      runTypes('completed', 'tool.call', 'tool.result', 'tool.call', 'permission', 'tool.result', 'message'),
    );
    expect(events[5]).toMatchObject({ call: 'c2', name: 'write_file', decision: 'refused', asked: false, rule: 'Edit(/x.txt)' });
    expect(events[6]).toMatchObject({ call: 'c2', status: 'failed', ok: false });
    expect(String(events[6]!.content)).toMatch(/^permission refused: default mode asks before writing files/);
    const toolMessages = (llm.requests[1]!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.content)).toEqual(['a.txt', expect.stringMatching(/^permission refused: /)]);
  });
});

describe.concurrent('model slips', () => {
  it('arguments that are not JSON fail that call with a message the model can act on', async () => {
    const llm = await fake('openai', [
      { tools: [{ name: 'read_file', arguments: {}, raw: '{"path": "a.txt"' }] },
      { text: 'Sorry, fixed.' },
    ]);
    const r = await runRaider(['--stream-json', '-e', 'openai', '-o', `url=${llm.url}`, '-r', makeProject(), '--no-session', '--', 'read']);
    expect(r.code).toBe(0);
    const result = parseEvents(r.stdout).find((e) => e.type === 'tool.result')!;
    expect(result).toMatchObject({
      name: 'read_file',
      status: 'failed',
      content: 'the arguments were not a JSON object: {"path": "a.txt"',
    });
  });

  it('an empty answer is not sent back as an empty message on resume', () => {
    expect(
      toModelMessages([
        { role: 'user', content: 'q1' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'q2' },
      ]),
    ).toEqual([
      { role: 'user', content: 'q1' },
      { role: 'user', content: 'q2' },
    ]);
  });
});

describe.concurrent('choosing the engine', () => {
  it('.raider.yml names engine, model and URL; an environment key is not sent to a URL from a project file', async () => {
    const llm = await fake('openai', [{ text: 'from the project config' }]);
    const root = makeProject(undefined, { '.raider.yml': `engine: openai\nmodel: qwen-local\nurl: ${llm.url}\n` });
    const r = await runRaider(['--stream-json', '-r', root, '--no-session', '--', 'hi'], {
      env: cleanEnv({ OPENAI_API_KEY: 'sk-do-not-leak' }),
    });
    expect(r.code).toBe(0);
    expect(parseEvents(r.stdout)[0]).toMatchObject({ engine: 'openai', model: 'qwen-local' });
    expect(llm.requests[0]!.body.model).toBe('qwen-local');
    expect(llm.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('OPENAI_BASE_URL with OPENAI_API_KEY: the pair from the environment goes together', async () => {
    const llm = await fake('openai', [{ text: 'ok' }]);
    const r = await runRaider(['--json', '-r', makeProject(), '--no-session', '--', 'hi'], {
      env: cleanEnv({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-env' }),
    });
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed', response: 'ok' });
    expect(llm.requests[0]!.headers.authorization).toBe('Bearer sk-env');
  });

  it('ANTHROPIC_API_KEY alone picks anthropic and its default model', async () => {
    // Pointed at a closed port: only the choice matters here, not the answer.
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const r = await runRaider(
      ['--stream-json', '-o', `url=${url}`, '-o', 'max_retries=0', '-r', makeProject(), '--no-session', '--', 'hi'],
      {
        env: cleanEnv({ ANTHROPIC_API_KEY: 'k' }),
      },
    );
    expect(parseEvents(r.stdout)[0]).toMatchObject({ engine: 'anthropic', model: 'claude-haiku-4-5' });
  });

  it('an openai engine without a key for the real service is a configuration error that says what to set', async () => {
    const r = await runRaider(['--stream-json', '-e', 'openai', '-r', makeProject(), '--', 'hi']);
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toMatch(/OPENAI_API_KEY/);
    expect(r.stderr).toMatch(/OPENAI_BASE_URL/);
  });

  it('an invalid .raider.yml is exit 3 naming the file and the key', async () => {
    const root = makeProject(undefined, { '.raider.yml': 'engine: [openai]\n' });
    const r = await runRaider(['--stream-json', '-r', root, '--', 'hi']);
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toContain(`${join(root, '.raider.yml')}: engine:`);
  });
});

describe.concurrent('--provider ALIAS', () => {
  function homeWith(config: string): string {
    const home = makeProject(undefined, { '.raider/config.yml': config });
    return home;
  }

  it('uses the binding: engine, URL, its first model; the key only from key_env', async () => {
    const llm = await fake('openai', [{ text: 'via provider' }]);
    const home = homeWith(
      `providers:\n  acme:\n    url: ${llm.url}\n    engine: openai\n    models: [acme-small, acme-big]\n    key_env: ACME_KEY\n`,
    );
    const r = await runRaider(['--stream-json', '--provider', 'acme', '-r', makeProject(), '--no-session', '--', 'hi'], {
      env: cleanEnv({ HOME: home, ACME_KEY: 'acme-secret', OPENAI_API_KEY: 'sk-not-for-acme' }),
    });
    expect(r.code).toBe(0);
    expect(parseEvents(r.stdout)[0]).toMatchObject({ engine: 'openai', model: 'acme-small' });
    expect(llm.requests[0]!.headers.authorization).toBe('Bearer acme-secret');
  });

  it('--model picks among the models; one it does not offer is exit 3', async () => {
    const llm = await fake('openai', [{ text: 'big' }]);
    const home = homeWith(`providers:\n  acme: { url: '${llm.url}', models: [acme-small, acme-big] }\n`);
    const env = cleanEnv({ HOME: home });
    const ok = await runRaider(['--json', '--provider', 'acme', '-m', 'acme-big', '-r', makeProject(), '--no-session', '--', 'hi'], {
      env,
    });
    expect(JSON.parse(ok.stdout)).toMatchObject({ status: 'completed' });
    expect(llm.requests[0]!.body.model).toBe('acme-big');
    const bad = await runRaider(['--json', '--provider', 'acme', '-m', 'gpt-9', '-r', makeProject(), '--', 'hi'], { env });
    expect(bad).toMatchObject({ code: 3, stdout: '' });
    expect(bad.stderr).toMatch(/provider 'acme' offers no model 'gpt-9' \(offers: acme-small, acme-big/);
  });

  it('an unknown alias is exit 3; --provider with --engine is exit 2', async () => {
    const env = cleanEnv({ HOME: homeWith('providers: {}\n') });
    const unknown = await runRaider(['--stream-json', '--provider', 'nope', '-r', makeProject(), '--', 'hi'], { env });
    expect(unknown).toMatchObject({ code: 3, stdout: '' });
    expect(unknown.stderr).toMatch(/unknown provider 'nope'.*raider provider add nope URL/);
    const both = await runRaider(['--stream-json', '--provider', 'nope', '-e', 'openai', '-r', makeProject(), '--', 'hi'], { env });
    expect(both).toMatchObject({ code: 2, stdout: '' });
  });
});

describe.concurrent('packs', () => {
  it('go into the system prompt in order (.raider.yml packs first, persona last): project file, home file, built-in', async () => {
    const llm = await fake('openai', [{ text: 'ok' }]);
    const home = makeProject(undefined, { '.raider/packs/mine.md': 'HOME PACK TEXT\n' });
    const root = makeProject(undefined, {
      '.raider/packs/house.md': 'HOUSE RULES: tabs\n',
      '.raider/packs/caveman.md': 'PROJECT CAVEMAN\n',
      '.raider.yml': 'packs: [house]\n',
    });
    mkdirSync(join(root, 'src'));
    // house comes from .raider.yml (before the --pack ones) and is added once even when repeated.
    const r = await runRaider(
      [
        '--json',
        '-e',
        'openai',
        '-o',
        `url=${llm.url}`,
        '--pack',
        'mine',
        '--pack',
        'polite',
        '--pack',
        'house',
        '--pack',
        'caveman',
        '-r',
        root,
        '--no-session',
        '--',
        'hi',
      ],
      {
        env: cleanEnv({ HOME: home }),
      },
    );
    expect(r.code).toBe(0);
    const system = (llm.requests[0]!.body.messages as Array<{ role: string; content: string }>)[0]!.content;
    const at = (s: string): number => system.indexOf(s);
    expect(at('HOUSE RULES: tabs')).toBeGreaterThan(0);
    expect(system.lastIndexOf('HOUSE RULES')).toBe(at('HOUSE RULES'));
    expect(at('HOME PACK TEXT')).toBeGreaterThan(at('HOUSE RULES'));
    expect(at('Persona: polite.')).toBeGreaterThan(at('HOME PACK TEXT'));
    // A project pack of a built-in's name wins over the built-in.
    expect(at('PROJECT CAVEMAN')).toBeGreaterThan(at('Persona: polite.'));
    expect(at('Persona: caveman.')).toBe(-1);
  });

  it('an unknown pack is exit 3 with nothing on stdout and where it looked', async () => {
    const root = makeProject('replies:\n  - steps: [ { message: "x" } ]\n');
    const r = await runRaider(['--stream-json', '-e', 'scripted', '--pack', 'nosuch', '-r', root, '--', 'hi']);
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toMatch(/unknown pack 'nosuch'/);
    expect(r.stderr).toContain(join(root, '.raider', 'packs', 'nosuch.md'));
    expect(r.stderr).toMatch(/built-in: caveman, polite, terse/);
    const path = await runRaider(['--stream-json', '-e', 'scripted', '--pack', '../etc/passwd', '-r', root, '--', 'hi']);
    expect(path).toMatchObject({ code: 3, stdout: '' });
  });
});

describe.concurrent('the stdout of a real engine run', () => {
  it('holds nothing but events, even when the SDK warns', async () => {
    // An unknown anthropic model makes the SDK warn about max tokens.
    const llm = await fake('anthropic', [{ text: 'fine' }]);
    const root = makeProject();
    writeFileSync(join(root, 'x'), '');
    const r = await runRaider(
      ['--stream-json', '-e', 'anthropic', '-m', 'unknown-model', '-o', `url=${llm.url}`, '-r', root, '--no-session', '--', 'hi'],
      {
        env: cleanEnv({ ANTHROPIC_API_KEY: 'k' }),
      },
    );
    expect(r.code).toBe(0);
    for (const line of r.stdout.trim().split('\n')) expect(JSON.parse(line)).toHaveProperty('version', 1);
    expect(r.stderr).toMatch(/warning from anthropic/);
  });
});
