/**
 * `raider acp-agent`: the built-in raider serving ACP on stdio (docs/agents.md,
 * "The built-in raider over ACP"). The SDK's client drives `bin/raider
 * acp-agent --engine scripted` as an editor would; and a hall runs it as the
 * ACP agent of a raider entry, through the bridge.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import {
  client,
  type ClientConnection,
  methods,
  ndJsonStream,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from '@agentclientprotocol/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RAIDER_BIN } from '../support/hall-client.js';
import { type EventTap, tapEvents } from '../support/hall-client.js';
import {
  alive,
  doneOf,
  doneTap,
  eventsFile,
  eventually,
  hall,
  type HallProcess,
  hallRoot,
  removeRoots,
  request,
  socketOf,
  spawned,
  startHallProcess,
} from './cli-helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const SCRIPT = `replies:
  - match: "look"
    steps:
      - tool: list_dir
        arguments: { path: "." }
      - message: "I looked: {{mission}}"
  - match: "write"
    steps:
      - tool: write_file
        arguments: { path: "{{mission}}.txt", content: "written" }
      - message: "tried to write {{mission}}.txt"
  - match: "sleeper"
    steps:
      - tool: bash
        arguments: { command: "echo $$ > sleeper.pid; exec sleep 300" }
      - message: "slept"
  - match: "slow"
    steps:
      - tool: list_dir
        arguments: { path: "." }
      - sleep: 30
      - message: "too late"
  - steps:
      - message: "Raid done: {{mission}} (turn {{turn}} of this session)"
`;

function scriptedRoot(config?: string): string {
  const root = hallRoot(config, 'raider-acp-agent-');
  fs.mkdirSync(path.join(root, '.raider'));
  fs.writeFileSync(path.join(root, '.raider', 'script.yml'), SCRIPT);
  return root;
}

interface AgentUnderTest {
  child: ChildProcessWithoutNullStreams;
  conn: ClientConnection;
  updates: SessionNotification[];
  asked: RequestPermissionRequest[];
  answer: (request: RequestPermissionRequest) => RequestPermissionResponse;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: AgentUnderTest[] = [];
// After all tests, not each: the tests run concurrently.
afterAll(() => {
  for (const a of started.splice(0)) if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
  removeRoots();
});

function startAgent(root: string, ...flags: string[]): AgentUnderTest {
  const child = spawn(process.execPath, [RAIDER_BIN, 'acp-agent', '--engine', 'scripted', ...flags], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stderr.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const state: AgentUnderTest = {
    child,
    updates: [],
    asked: [],
    answer: () => ({ outcome: { outcome: 'cancelled' } }),
    exited,
    conn: client({ name: 'test-editor' })
      .onNotification(methods.client.session.update, ({ params }) => {
        state.updates.push(params);
      })
      .onRequest(methods.client.session.requestPermission, ({ params }) => {
        state.asked.push(params);
        return state.answer(params);
      })
      .connect(
        ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>),
      ),
  };
  started.push(state);
  return state;
}

async function openSession(a: AgentUnderTest, root: string, mode = 'default'): Promise<string> {
  const init = await a.conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  expect(init).toMatchObject({ protocolVersion: 1, agentCapabilities: { loadSession: true }, authMethods: [] });
  const session = await a.conn.agent.request(methods.agent.session.new, { cwd: root, mcpServers: [] });
  expect(session.modes?.currentModeId).toBe(mode);
  return session.sessionId;
}

function prompt(a: AgentUnderTest, sessionId: string, text: string) {
  return a.conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
}

function updatesOf(a: AgentUnderTest, sessionId: string) {
  return a.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
}

function messages(a: AgentUnderTest, sessionId: string): string[] {
  return updatesOf(a, sessionId).flatMap((u) =>
    u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : [],
  );
}

describe.concurrent('raider acp-agent, driven by an ACP client', () => {
  it('answers a prompt: its tool calls and final message as session/updates, end_turn; the next prompt continues the session', async () => {
    const root = scriptedRoot();
    const a = startAgent(root);
    const sessionId = await openSession(a, root);
    expect(await prompt(a, sessionId, 'look around')).toMatchObject({ stopReason: 'end_turn' });
    const updates = updatesOf(a, sessionId);
    expect(updates.map((u) => u.sessionUpdate)).toEqual(['tool_call', 'tool_call_update', 'agent_message_chunk']);
    expect(updates[0]).toMatchObject({ sessionUpdate: 'tool_call', kind: 'search', title: 'list_dir .', rawInput: { path: '.' } });
    expect(updates[1]).toMatchObject({ sessionUpdate: 'tool_call_update', status: 'completed' });
    expect(messages(a, sessionId)).toEqual(['I looked: look around']);

    expect(await prompt(a, sessionId, 'and then')).toMatchObject({ stopReason: 'end_turn' });
    expect(messages(a, sessionId).at(-1)).toBe('Raid done: and then (turn 2 of this session)');
    // The session is a journal, as a one-shot run's.
    expect(fs.existsSync(path.join(root, '.raider', 'sessions', `${sessionId}.jsonl`))).toBe(true);

    a.child.stdin.end();
    expect(await a.exited).toEqual({ code: 0, signal: null });
  });

  it('asks before a write with session/request_permission: allowed once it runs, refused it does not', async () => {
    const root = scriptedRoot();
    const a = startAgent(root);
    const sessionId = await openSession(a, root);
    a.answer = () => ({ outcome: { outcome: 'selected', optionId: 'once' } });
    expect(await prompt(a, sessionId, 'write yes')).toMatchObject({ stopReason: 'end_turn' });
    expect(fs.readFileSync(path.join(root, 'write yes.txt'), 'utf8')).toBe('written');
    expect(a.asked).toHaveLength(1);
    const [question] = a.asked;
    expect(question?.toolCall).toMatchObject({ kind: 'edit', rawInput: { path: 'write yes.txt' } });
    expect(question?.options.map((o) => o.kind)).toEqual(expect.arrayContaining(['allow_once', 'reject_once']));
    // The question is about the tool call the client was shown.
    const shown = updatesOf(a, sessionId).find((u) => u.sessionUpdate === 'tool_call');
    expect(shown).toMatchObject({ toolCallId: question?.toolCall.toolCallId });

    const refusal = question?.options.find((o) => o.kind === 'reject_once')?.optionId ?? '';
    a.answer = () => ({ outcome: { outcome: 'selected', optionId: refusal } });
    expect(await prompt(a, sessionId, 'write no')).toMatchObject({ stopReason: 'end_turn' });
    expect(fs.existsSync(path.join(root, 'write no.txt'))).toBe(false);
    const failed = updatesOf(a, sessionId).filter((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'failed');
    expect(JSON.stringify(failed)).toContain('permission refused');
  });

  it('session/cancel ends a running prompt cancelled, and the agent takes the next prompt', async () => {
    const root = scriptedRoot();
    const a = startAgent(root);
    const sessionId = await openSession(a, root);
    const running = prompt(a, sessionId, 'slow one');
    // The run is under way once its first tool call is shown.
    await eventually(() => expect(updatesOf(a, sessionId).map((u) => u.sessionUpdate)).toContain('tool_call_update'), 20_000, 20);
    const asked = Date.now();
    await a.conn.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await running).toMatchObject({ stopReason: 'cancelled' });
    expect(Date.now() - asked).toBeLessThan(10_000);
    expect(messages(a, sessionId)).not.toContain('too late');
    expect(await prompt(a, sessionId, 'after')).toMatchObject({ stopReason: 'end_turn' });
  });

  it('session/load in a new process replays the session and continues it', async () => {
    const root = scriptedRoot();
    const first = startAgent(root);
    const sessionId = await openSession(first, root);
    await prompt(first, sessionId, 'remember me');
    first.child.stdin.end();
    await first.exited;

    const second = startAgent(root);
    await second.conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    await second.conn.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
    expect(updatesOf(second, sessionId)).toEqual(
      expect.arrayContaining([
        { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'remember me' } },
        expect.objectContaining({ sessionUpdate: 'agent_message_chunk' }),
      ]),
    );
    await prompt(second, sessionId, 'again');
    expect(messages(second, sessionId).at(-1)).toBe('Raid done: again (turn 2 of this session)');
  });

  for (const end of ['SIGTERM', "stdin's end"] as const) {
    it(`${end} during a prompt: the agent exits, and the process its tool started is gone`, async () => {
      const root = scriptedRoot();
      const a = startAgent(root, '--permission-mode', 'bypassPermissions');
      const sessionId = await openSession(a, root, 'bypassPermissions');
      void prompt(a, sessionId, 'sleeper').catch(() => {});
      const pidFile = path.join(root, 'sleeper.pid');
      await eventually(() => expect(fs.readFileSync(pidFile, 'utf8')).toMatch(/^\d+\n$/), 20_000, 20);
      const tool = Number(fs.readFileSync(pidFile, 'utf8'));
      let checked = false;
      try {
        expect(alive(tool)).toBe(true);
        if (end === 'SIGTERM') a.child.kill('SIGTERM');
        else a.child.stdin.end();
        expect(await a.exited).toEqual(end === 'SIGTERM' ? { code: null, signal: 'SIGTERM' } : { code: 0, signal: null });
        expect(alive(tool)).toBe(false);
        checked = true;
      } finally {
        // Failed, the tool's sleep would outlive the agent (afterAll kills the agent only).
        if (!checked && tool > 0 && alive(tool)) process.kill(tool, 'SIGKILL');
      }
    });
  }

  it('takes no mission and no machine output: usage errors, exit 2', async () => {
    const root = scriptedRoot();
    for (const flags of [['--', 'do it'], ['--stream-json']]) {
      const a = startAgent(root, ...flags);
      expect(await a.exited).toEqual({ code: 2, signal: null });
    }
  });
});

describe('a hall runs raider acp-agent as the ACP agent of a raider entry', () => {
  let root = '';
  let hallProcess: HallProcess | undefined;
  let tap: EventTap | undefined;
  beforeAll(async () => {
    root = scriptedRoot(
      `raiders:\n  builtin: { acp: { command: ${JSON.stringify(RAIDER_BIN)}, args: [acp-agent, --engine, scripted] } }\n` +
        'questions: { socket: true }\npermission_timeout: 60\n',
    );
    hallProcess = await startHallProcess(root);
    tap = await doneTap(root);
  });
  afterAll(async () => {
    tap?.close();
    expect((await hallProcess?.stop())?.code).toBe(0);
  });

  it('a mission runs as a prompt turn: spawn --attach prints the answer, raider.done is completed, the events hold its tool call', async () => {
    const r = await hall(['spawn', '--attach', 'builtin', 'look', 'here'], root);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('I looked: look here');
    const { id } = spawned(r.stderr);
    if (!tap) throw new Error('no hall');
    expect(await doneOf(tap, id)).toMatchObject({ status: 'completed', response: 'I looked: look here' });
    const events = fs.readFileSync(eventsFile(root, id), 'utf8');
    expect(events).toContain('"type":"tool.call"');
    expect(events).toContain('"engine":"acp"');
  });

  it("its permission question is the hall's: answered once on the socket, the write runs", async () => {
    const questions = await tapEvents(socketOf(root), 'permission.');
    try {
      const run = await request(socketOf(root), { cmd: 'spawn', name: 'builtin', mission: 'write hall' });
      const asked = await questions.waitFor((e) => e.type === 'permission.asked' && e.id === run.id, 60_000);
      expect(asked).toMatchObject({ question: 'q1', kind: 'edit' });
      expect(await request(socketOf(root), { cmd: 'answer', run: run.id, question: 'q1', answer: 'once' })).toMatchObject({ answered: 1 });
      if (!tap) throw new Error('no hall');
      expect(await doneOf(tap, String(run.id))).toMatchObject({ status: 'completed', response: 'tried to write write hall.txt' });
      expect(fs.readFileSync(path.join(root, 'write hall.txt'), 'utf8')).toBe('written');
    } finally {
      questions.close();
    }
  });

  it("a cancel reaches the raider as session/cancel: the run ends cancelled, without the hall's escalation", async () => {
    const { id } = await request(socketOf(root), { cmd: 'spawn', name: 'builtin', mission: 'slow one' });
    // The prompt is in flight once its first tool call is in the run's events.
    await eventually(() => expect(fs.readFileSync(eventsFile(root, String(id)), 'utf8')).toContain('"type":"tool.result"'), 30_000, 20);
    await request(socketOf(root), { cmd: 'cancel', id });
    if (!tap) throw new Error('no hall');
    const done = await doneOf(tap, String(id));
    expect(done).toMatchObject({ status: 'cancelled' });
    expect(done.hall_stop).toBeUndefined();
  });
});
