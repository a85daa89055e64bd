// The permission channel through the real raider: a stand-in for
// the hall listens on a UNIX socket, reads each `ask` line and answers it.
// `once` allows one call, `session` adds the rule for the session (also
// for the next run of it), `no` refuses and the run goes on; a closed or
// missing channel and a cancel are `no`.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp, ensureBuilt, makeProject, parseEvents, runRaider, startRaider, type StreamEvent } from './helpers.js';

beforeAll(ensureBuilt, 120_000);
afterAll(cleanUp);

const SCRIPT = `
replies:
  - match: "^first"
    steps:
      - tool: bash
        arguments: { command: "echo one" }
      - tool: bash
        arguments: { command: "echo one" }
      - tool: write_file
        arguments: { path: "out.txt", content: "x" }
      - message: "done first"
  - match: "^second"
    steps:
      - tool: bash
        arguments: { command: "echo one" }
      - tool: bash
        arguments: { command: "echo two" }
      - message: "done second"
`;

type Answer = 'once' | 'session' | 'no' | 'close' | 'never';

interface FakeHall {
  path: string;
  questions: Array<Record<string, unknown>>;
  /** Resolves when the raider's connection has closed. */
  disconnected: Promise<void>;
  asked: Promise<void>;
  close(): Promise<void>;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
});

async function fakeHall(root: string, answers: Answer[]): Promise<FakeHall> {
  const path = join(root, 'perm.sock');
  const questions: Array<Record<string, unknown>> = [];
  let onDisconnect: () => void = () => {};
  let onAsked: () => void = () => {};
  const disconnected = new Promise<void>((r) => (onDisconnect = r));
  const asked = new Promise<void>((r) => (onAsked = r));
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('close', () => onDisconnect());
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const q = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
        buffer = buffer.slice(nl + 1);
        questions.push(q);
        onAsked();
        const a = answers.shift() ?? 'no';
        if (a === 'close') socket.destroy();
        else if (a !== 'never') socket.write(`${JSON.stringify({ type: 'answer', id: q.id, answer: a, reason: `test says ${a}` })}\n`);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  return {
    path,
    questions,
    disconnected,
    asked,
    close: async () => {
      for (const s of sockets) s.destroy();
    },
  };
}

/** The scripted raider's argv with its questions going to `channel`; without a session unless `session` says otherwise. */
function channelRun(channel: string, root: string, mission: string, session: readonly string[] = ['--no-session']): string[] {
  return ['--stream-json', '-e', 'scripted', '--permission-channel', channel, '-r', root, ...session, '--', mission];
}

function permissionEvents(events: StreamEvent[]): Array<Record<string, unknown>> {
  return events
    .filter((e) => e.type === 'permission')
    .map(({ call, decision, asked, answer, rule }) => ({ call, decision, asked, answer, rule }));
}

describe('a permission round trip over the channel', () => {
  it('session allows the rest of the run and the next run of the session; no refuses and the run goes on', async () => {
    const root = makeProject(SCRIPT);
    const hall = await fakeHall(root, ['session', 'no', 'once']);
    const r = await runRaider(channelRun(hall.path, root, 'first', []));
    expect(r.code).toBe(0);
    const events = parseEvents(r.stdout);

    // One question for the two identical bash calls, one for the write.
    expect(hall.questions).toEqual([
      {
        type: 'ask',
        id: 'q1',
        call: 'c1',
        tool: 'bash',
        input: { command: 'echo one' },
        title: 'Run: echo one',
        kind: 'execute',
        reason: 'default mode asks before running commands unless a rule allows it',
        rule: 'Bash(echo one)',
      },
      expect.objectContaining({ type: 'ask', id: 'q2', call: 'c3', tool: 'write_file', kind: 'edit', rule: 'Edit(/out.txt)' }),
    ]);
    expect(permissionEvents(events)).toEqual([
      { call: 'c1', decision: 'allowed', asked: true, answer: 'session', rule: 'Bash(echo one)' },
      { call: 'c3', decision: 'refused', asked: true, answer: 'no', rule: 'Edit(/out.txt)' },
    ]);
    // The tool.call comes before its question; the results say what happened.
    const order = events.map((e) => `${e.type}:${String(e.call ?? '')}`);
    expect(order.indexOf('tool.call:c1')).toBeLessThan(order.indexOf('permission:c1'));
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results.map((e) => [e.call, e.status, e.content])).toEqual([
      ['c1', 'succeeded', 'one\n'],
      ['c2', 'succeeded', 'one\n'],
      ['c3', 'failed', 'permission refused: refused when asked: test says no'],
    ]);
    expect(existsSync(join(root, 'out.txt'))).toBe(false);
    expect(events.at(-1)).toMatchObject({ status: 'completed', response: 'done first' });

    // The journal keeps the grant; the next run of the session does not ask again for it.
    const session = events.at(-1)!.session as { id: string; path: string };
    expect(readFileSync(session.path, 'utf8')).toContain('"answer":"session"');
    const next = await runRaider(channelRun(hall.path, root, 'second', ['--session', session.id]));
    expect(next.code).toBe(0);
    expect(hall.questions.slice(2).map((q) => q.rule)).toEqual(['Bash(echo two)']);
    expect(
      parseEvents(next.stdout)
        .filter((e) => e.type === 'tool.result')
        .map((e) => e.status),
    ).toEqual(['succeeded', 'succeeded']);
  });

  it('once allows that call only: the same call is asked again', async () => {
    const root = makeProject(SCRIPT);
    const hall = await fakeHall(root, ['once', 'once', 'no']);
    const r = await runRaider(channelRun(hall.path, root, 'first'));
    expect(r.code).toBe(0);
    expect(hall.questions.map((q) => q.rule)).toEqual(['Bash(echo one)', 'Bash(echo one)', 'Edit(/out.txt)']);
  });

  it('a channel that closes refuses the waiting question and every later one', async () => {
    const root = makeProject(SCRIPT);
    const hall = await fakeHall(root, ['close']);
    const r = await runRaider(channelRun(hall.path, root, 'first'));
    expect(r.code).toBe(0);
    const results = parseEvents(r.stdout).filter((e) => e.type === 'tool.result');
    expect(results.map((e) => e.status)).toEqual(['failed', 'failed', 'failed']);
    expect(String(results[0]!.content)).toMatch(
      /^permission refused: refused when asked: the permission channel closed before an answer came$/,
    );
    expect(hall.questions).toHaveLength(1);
  });

  it('a channel that cannot be reached refuses with the reason', async () => {
    const root = makeProject(SCRIPT);
    const r = await runRaider(channelRun(join(root, 'no.sock'), root, 'first'));
    expect(r.code).toBe(0);
    const first = parseEvents(r.stdout).find((e) => e.type === 'tool.result')!;
    expect(String(first.content)).toMatch(/^permission refused: refused when asked: permission channel .*no\.sock: .*ENOENT/);
  });

  it('SIGINT while a question waits: the run is cancelled at once and the channel closed', async () => {
    const root = makeProject(SCRIPT);
    const hall = await fakeHall(root, ['never']);
    const { child, done } = startRaider(channelRun(hall.path, root, 'first', []));
    await hall.asked;
    child.kill('SIGINT');
    const r = await done;
    expect(r.signal).toBe('SIGINT');
    const events = parseEvents(r.stdout);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'run.state', 'tool.call', 'tool.result', 'run.state', 'run.finished']);
    expect(events[3]).toMatchObject({ status: 'cancelled' });
    expect(events.at(-1)).toMatchObject({ status: 'cancelled' });
    await hall.disconnected;
  });

  it('without a channel, what the policy asks about is refused; rules in .raider/config.yml allow', async () => {
    const root = makeProject(SCRIPT, { '.raider/config.yml': 'permissions:\n  allow: ["Bash(echo *)"]\n' });
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', root, '--no-session', '--', 'first']);
    const results = parseEvents(r.stdout).filter((e) => e.type === 'tool.result');
    expect(results.map((e) => e.status)).toEqual(['succeeded', 'succeeded', 'failed']);
    expect(String(results[2]!.content)).toContain('there is nobody to ask (no permission channel)');
  });
});
