/**
 * A raider entry with an ACP agent: each run is one prompt turn of the agent,
 * through the ACP bridge the hall starts like any raider (docs/agents.md).
 * The agent is test/fixtures/scripted-acp-agent.mjs; its prompt says what it does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StreamEvent } from '../../src/protocol/raider-stream.js';
import { REPO, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import {
  alive,
  doneOf,
  doneTap,
  eventsFile,
  eventually,
  hall,
  type HallProcess,
  hallLive,
  hallRoot,
  removeRoots,
  request,
  runCli,
  socketOf,
  startHallProcess,
} from './cli-helpers.js';
import type { EventTap } from '../support/hall-client.js';
import { bearer, boardOf, httpRequest } from '../dashboard/dashboard-support.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const SPAWNED_ID = /^Spawned raider (\S+) \(PID \d+\)/m;
const VARIABLE = '$' + '{ACP_TEST_WORD}';
const UNSET = '$' + '{ACP_TEST_UNSET}';

const CONFIG = `raiders:
  scripted: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)} } }
  reporter: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)} } }
  pids: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_PID_FILE: agent.pid } } }
  envy: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_ENV_OUT: GREETING, GREETING: "${VARIABLE} there" } }, model: m1, permission_mode: default }
  deaf: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_PID_FILE: deaf.pid } } }
  hanger: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_PID_FILE: hang.pid } } }
  unset: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { KEY: "${UNSET}" } } }
  claude: { agent: claude }
  planner: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)} }, permission_mode: plan, model: m2 }
  optioned: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_OFFER: config } }, permission_mode: acceptEdits }
  wrongmode: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)} }, permission_mode: bypassPermissions }
  wrongmodel: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)} }, model: gpt-9 }
  bare: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_OFFER: none } }, permission_mode: plan, model: m2 }
  hanginit: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_START: hang-initialize, SCRIPTED_ACP_PID_FILE: hanginit.pid }, start_timeout: 3 } }
  hangnew: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_START: hang-session-new, SCRIPTED_ACP_PID_FILE: hangnew.pid }, start_timeout: 3 } }
  authy: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_START: auth } } }
  exiter: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_START: exit } } }
  huge: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_PID_FILE: huge.pid } } }
cancel_grace: 0.5
dashboard: { listen: "127.0.0.1:0" }
`;

let root = '';
let hallProcess: HallProcess | undefined;
let tap: EventTap | undefined;

beforeAll(async () => {
  root = hallRoot(CONFIG);
  // No ACP adapter on this PATH: the preset's command is not found.
  hallProcess = await startHallProcess(root, { ACP_TEST_WORD: 'skål', PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` });
  tap = await doneTap(root);
});

afterAll(async () => {
  tap?.close();
  expect((await hallProcess?.stop())?.code).toBe(0);
  removeRoots();
});

function done(id: string) {
  if (!tap) throw new Error('no hall');
  return doneOf(tap, id);
}

function runEvents(id: string): Array<Record<string, unknown>> {
  const lines = fs.readFileSync(eventsFile(root, id), 'utf8').trim().split('\n');
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Waits until the agent (which wrote its pid file) has said "waiting" in the turn of run `id`. */
async function promptInFlight(id: string, pidFile: string): Promise<void> {
  await eventually(() => expect(fs.readFileSync(eventsFile(root, id), 'utf8')).toContain('"message.chunk"'), 30_000, 20);
  expect(fs.readFileSync(pidFile, 'utf8')).toMatch(/^\d+ \d+$/);
}

async function attached(name: string, mission: string) {
  const r = await hall(['spawn', '--attach', name, ...mission.split(' ')], root);
  return { ...r, id: SPAWNED_ID.exec(r.stderr)?.[1] ?? '' };
}

describe.concurrent('a run of an ACP agent is one prompt turn', () => {
  it('an answered mission: spawn --attach prints the answer and exits 0; raider.done is completed with it', async () => {
    const r = await attached('scripted', 'answer hello from the agent');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('hello from the agent');
    expect(await done(r.id)).toMatchObject({ status: 'completed', response: 'hello from the agent' });
    const events = runEvents(r.id);
    expect(events.map((e) => e.type)).toEqual([
      'run.started',
      'run.state',
      'session',
      'message.chunk',
      'message.chunk',
      'message',
      'run.state',
      'run.finished',
    ]);
    expect(events[0]).toMatchObject({ engine: 'acp', agent: SCRIPTED_ACP_AGENT });
    // The agent session the prompt went to: a plain name's run opens a new one.
    expect(events[2]).toMatchObject({ agent_session: 'scripted-1', opened: 'new' });
    // The agent's stderr is in the slot log with the run id, as any raider's.
    const logs = await hall(['logs', r.id], root);
    expect(logs.stdout).toContain(`scripted agent: session in ${root}`);
  });

  it('what the agent writes on stderr as it is stopped is in the slot log when the run has ended, though the bridge no longer waits for Node to wind down', async () => {
    // More than a pipe holds: the end of it is still unread when the agent's exit is seen.
    const r = await attached('scripted', 'lastwords 300000');
    expect(r.code).toBe(0);
    expect(await done(r.id)).toMatchObject({ status: 'completed', response: 'said' });
    const logs = await hall(['logs', r.id], root);
    expect(logs.stdout).toContain('scripted agent: last words');
  });

  it("attach shows the agent's text as it streams: the first chunk while the turn goes on, the whole answer once", async () => {
    const go = path.join(root, 'partial-go-on');
    const spawned = await request(socketOf(root), { cmd: 'spawn', name: 'scripted', mission: `partial first words ${go}` });
    const id = String(spawned.id);
    const live = hallLive(['attach', id], root);
    // The agent said its first chunk and waits for the file: the run has not ended, attach shows it already.
    await live.printed('first words');
    expect(live.stdout()).not.toContain('then the rest');
    fs.writeFileSync(go, '');
    const r = await live.done;
    expect(r.code).toBe(0);
    const answer = 'first words, then the rest';
    expect(await done(id)).toMatchObject({ status: 'completed', response: answer });
    // The final message repeats the chunks: not printed again.
    expect(r.stdout).toBe(`· run started (acp)\n${answer}\n■ completed\n`);
    // Replayed once ended, the same; --json is the events file, line for line (the chunks and the final message).
    expect((await hall(['attach', id], root)).stdout).toBe(r.stdout);
    expect((await hall(['attach', '--json', id], root)).stdout).toBe(fs.readFileSync(eventsFile(root, id), 'utf8'));
  });

  it('tool calls are tool.call and tool.result events with the ACP kind and title; the response is the final message', async () => {
    const r = await attached('scripted', 'tool');
    expect(await done(r.id)).toMatchObject({ status: 'completed', response: 'all read' });
    // attach: the text before the call and after it as streamed, each on its own lines; the final message not again.
    expect(r.stdout).toBe(
      [
        '· run started (acp)',
        'Let me read it.',
        '→ Read README.md {"path":"README.md"}',
        '← Read README.md succeeded: # the readme',
        'all read',
        '■ completed',
        '',
      ].join('\n'),
    );
    const events = runEvents(r.id);
    expect(events.find((e) => e.type === 'tool.call')).toMatchObject({
      call: 't1',
      name: 'Read README.md',
      title: 'Read README.md',
      kind: 'read',
      arguments: { path: 'README.md' },
    });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({
      call: 't1',
      kind: 'read',
      status: 'succeeded',
      ok: true,
      content: '# the readme',
    });
  });

  it("thoughts, plans and usage are thought.chunk, plan and usage events of the stream's schema; a thought is not the answer", async () => {
    const r = await attached('scripted', 'report');
    expect(await done(r.id)).toMatchObject({ status: 'completed', response: 'reported' });
    // attach shows the thought apart from the answer, and the plan; the answer once.
    expect(r.stdout).toBe(
      [
        '· run started (acp)',
        '· thought: thinking it over',
        '· plan',
        '  ✓ read the code',
        '  ▸ write the fix',
        'reported',
        '■ completed',
        '',
      ].join('\n'),
    );
    const events = runEvents(r.id).filter((e) => ['thought.chunk', 'plan', 'usage'].includes(String(e.type)));
    expect(events).toEqual([
      expect.objectContaining({ type: 'thought.chunk', role: 'assistant', content: 'thinking it over' }),
      expect.objectContaining({
        type: 'plan',
        entries: [
          { content: 'read the code', priority: 'high', status: 'completed' },
          { content: 'write the fix', priority: 'medium', status: 'in_progress' },
        ],
      }),
      expect.objectContaining({ type: 'usage', context_used: 1200, context_size: 200000, cost: { amount: 0.25, currency: 'USD' } }),
      expect.objectContaining({ type: 'usage', context_used: 1500, context_size: 200000 }),
    ]);
    expect(events[3]).not.toHaveProperty('cost');
    for (const e of events) expect(StreamEvent.safeParse(e).success).toBe(true);
  });

  it("usage reaches raider.done, the run's record and the charts: the prompt result's tokens, the last context, the last cost said", async () => {
    // Its own raider name: the charts count usage per raider and day, no other test's runs with it.
    const r = await attached('reporter', 'report');
    const usage = {
      input_tokens: 300,
      output_tokens: 40,
      total_tokens: 340,
      cached_read_tokens: 120,
      context_used: 1500,
      context_size: 200000,
      cost: { amount: 0.25, currency: 'USD' },
      // A run of a plain name starts its agent session: its own share is the whole cost.
      run_cost: { amount: 0.25, currency: 'USD' },
    };
    expect((await done(r.id)).usage).toEqual(usage);
    expect(runEvents(r.id).at(-1)).toMatchObject({ type: 'run.finished', usage });
    const board = await boardOf(root);
    // Read as a past run's record (the dashboard lists it so once the hall let go of the run).
    await eventually(async () => {
      const page = await httpRequest(board, `/api/runs/${r.id}`, { headers: bearer(board) });
      expect((JSON.parse(page.body) as { run: { usage?: unknown } }).run.usage).toEqual(usage);
    });
    // The charts read the same: the last context as its tokens, and the cost the agent said last (its last update had none).
    const charts = await httpRequest(board, '/api/charts?days=1', { headers: bearer(board) });
    const rows = (JSON.parse(charts.body) as { usage: Array<Record<string, unknown>> }).usage.filter((u) => u.raider === 'reporter');
    expect(rows).toEqual([expect.objectContaining({ runs: 1, reported: 1, tokens: 1500, cost: { USD: 0.25 } })]);
    // A run whose agent said no usage has none.
    const plain = await attached('scripted', 'answer no usage here');
    expect(await done(plain.id)).not.toHaveProperty('usage');
  });

  it('a permission question with no face to answer it is refused at once, with the reason in the events', async () => {
    const r = await attached('scripted', 'ask');
    expect(await done(r.id)).toMatchObject({ status: 'completed', response: 'refused' });
    expect(runEvents(r.id).find((e) => e.type === 'permission')).toMatchObject({
      call: 't1',
      decision: 'refused',
      asked: false,
      reason: 'the hall gave this run no permission channel: nobody can answer',
    });
  });

  it('raider.spawned carries the pid of the bridge, the agent is its child, and the agent does not outlive the run', async () => {
    const spawned = await request(socketOf(root), { cmd: 'spawn', name: 'pids', mission: 'answer ok' });
    const id = String(spawned.id);
    expect(await done(id)).toMatchObject({ status: 'completed', response: 'ok' });
    const [agentPid, agentParent] = fs.readFileSync(path.join(root, 'agent.pid'), 'utf8').split(' ').map(Number);
    expect(agentParent).toBe(spawned.pid);
    await eventually(() => expect(alive(agentPid ?? 0)).toBe(false), 10_000, 20);
  });

  it("the agent's environment: acp.env over the hall's, each VAR reference expanded from the hall's environment", async () => {
    const r = await attached('envy', 'answer -');
    expect(await done(r.id)).toMatchObject({ status: 'completed', response: 'GREETING=skål there' });
  });

  it('a variable of acp.env that is not set in the hall environment fails the run, naming the key and the variable', async () => {
    const r = await attached('unset', 'answer x');
    // The spawn itself is answered with the error: the run never starts.
    const message = `could not be started: raiders.unset.acp.env.KEY: ${UNSET} not set in the environment`;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    const id = /raider (\S+) could not be started/.exec(r.stderr)?.[1] ?? '';
    expect(await done(id)).toMatchObject({ status: 'failed' });
  });

  const failures: Array<[string, string]> = [
    ['error model overloaded', 'the agent answered session/prompt with an error: model overloaded (code -32603)'],
    ['stop max_tokens', 'the agent stopped: it reached its token limit (stop reason max_tokens)'],
    ['stop max_turn_requests', 'the agent stopped: it reached its limit of model requests in one turn (stop reason max_turn_requests)'],
    ['stop refusal', 'the agent refused to go on (stop reason refusal)'],
    [
      'crash',
      'the agent exited during session/prompt (exit code 3); its last stderr lines:\n' +
        `scripted agent: session in ${'ROOT'}\nscripted agent: about to fail\nscripted agent: out of memory`,
    ],
  ];
  for (const [mission, error] of failures) {
    it(`${mission}: the run fails naming the reason, spawn --attach exits 1`, async () => {
      const r = await attached('scripted', mission);
      const expected = error.replace('ROOT', root);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`run ${r.id} ended: failed: ${expected}`);
      expect(await done(r.id)).toMatchObject({ status: 'failed', error: expected, exit_code: 1 });
    });
  }

  it('a cancel ends the turn: the run is cancelled and the agent is gone', async () => {
    const spawned = await request(socketOf(root), { cmd: 'spawn', name: 'hanger', mission: 'hang' });
    const id = String(spawned.id);
    const pidFile = path.join(root, 'hang.pid');
    await promptInFlight(id, pidFile);
    await request(socketOf(root), { cmd: 'cancel', id });
    expect(await done(id)).toMatchObject({ status: 'cancelled' });
    // The agent was asked to end its turn (ACP's session/cancel), and it did.
    expect((await hall(['logs', id], root)).stdout).toContain('scripted agent: session/cancel received');
    const agentPid = Number(fs.readFileSync(pidFile, 'utf8').split(' ')[0]);
    await eventually(() => expect(alive(agentPid)).toBe(false), 10_000, 20);
  });

  it('an agent deaf to session/cancel gets the hall escalation: the run is interrupted by SIGTERM after cancel_grace', async () => {
    const spawned = await request(socketOf(root), { cmd: 'spawn', name: 'deaf', mission: 'deaf' });
    const id = String(spawned.id);
    const pidFile = path.join(root, 'deaf.pid');
    await promptInFlight(id, pidFile);
    await request(socketOf(root), { cmd: 'cancel', id });
    expect(await done(id)).toMatchObject({
      status: 'interrupted',
      signaled: 1,
      hall_stop: 'cancelled by the hall, escalated to SIGTERM (SIGINT, SIGTERM)',
    });
    const agentPid = Number(fs.readFileSync(pidFile, 'utf8').split(' ')[0]);
    await eventually(() => expect(alive(agentPid)).toBe(false), 10_000, 20);
  });

  it('a preset whose command is not installed: the error names the command and its npm package', async () => {
    const r = await attached('claude', 'hello');
    const error =
      'agent command claude-agent-acp not found (not on PATH nor a file); it comes with the npm package ' +
      '@agentclientprotocol/claude-agent-acp (npm install -g @agentclientprotocol/claude-agent-acp)';
    expect(r.code).toBe(1);
    expect(await done(r.id)).toMatchObject({ status: 'failed', error });
  });
});

describe.concurrent("the entry's permission_mode and model on the agent's session", () => {
  it('a mode and a model the agent offers are set (session/set_mode, the model config option) before the prompt', async () => {
    const r = await attached('planner', 'settings');
    expect(await done(r.id)).toMatchObject({ status: 'completed', response: 'mode=plan model=m2' });
    const logs = (await hall(['logs', r.id], root)).stdout;
    expect(logs).toContain('scripted agent: set mode plan');
    expect(logs).toContain('scripted agent: set model m2');
    expect(runEvents(r.id).filter((e) => e.type === 'note')).toEqual([]);
  });

  it('an agent that offers its modes as a config option of category mode gets the mode that way', async () => {
    const r = await attached('optioned', 'settings');
    expect(await done(r.id)).toMatchObject({ status: 'completed', response: 'mode=acceptEdits model=m1' });
    // m1 is the session's model already, and this entry names none: only the mode is set.
    const logs = (await hall(['logs', r.id], root)).stdout;
    expect(logs).toContain('scripted agent: set mode acceptEdits');
    expect(logs).not.toContain('scripted agent: set model');
  });

  it('a mode the agent does not offer fails the run, naming the mode and the ones offered; no prompt is sent', async () => {
    const r = await attached('wrongmode', 'settings');
    const error = 'the agent offers no permission mode bypassPermissions; it offers: default, acceptEdits, plan';
    expect(r.code).toBe(1);
    expect(await done(r.id)).toMatchObject({ status: 'failed', error });
    expect(runEvents(r.id).map((e) => e.type)).not.toContain('message.chunk');
  });

  it('a model the agent does not offer fails the run, naming the model and the ones offered', async () => {
    const r = await attached('wrongmodel', 'settings');
    expect(r.code).toBe(1);
    expect(await done(r.id)).toMatchObject({ status: 'failed', error: 'the agent offers no model gpt-9; it offers: m1, m2' });
  });

  it('an agent that offers no modes and no model choice: a note for each in the events and the slot log, and the run goes on', async () => {
    const r = await attached('bare', 'settings');
    expect(await done(r.id)).toMatchObject({ status: 'completed', response: 'mode=default model=m1' });
    const notes = runEvents(r.id).filter((e) => e.type === 'note');
    expect(notes).toMatchObject([
      { setting: 'mode', text: 'the agent offers no session modes: permission mode plan not applied' },
      { setting: 'model', text: 'the agent offers no model choice: model m2 not applied' },
    ]);
    expect((await hall(['logs', r.id], root)).stdout).toContain(
      'raider acp-client: the agent offers no session modes: permission mode plan not applied',
    );
  });
});

describe.concurrent('an ACP agent that misbehaves ends its own run, with a message a person can act on', () => {
  for (const [name, step] of [
    ['hanginit', 'initialize'],
    ['hangnew', 'session/new'],
  ] as const) {
    it(`an agent that hangs in ${step} fails its run after acp.start_timeout, and is gone`, async () => {
      const r = await attached(name, 'answer never');
      const error = `the agent did not answer ${step} within 3 s (acp.start_timeout); it was stopped`;
      expect(r.code).toBe(1);
      expect(await done(r.id)).toMatchObject({ status: 'failed', error });
      // Written before the agent read anything: a run that waited 3 s for it has the whole line.
      const pidLine = fs.readFileSync(path.join(root, `${name}.pid`), 'utf8');
      expect(pidLine).toMatch(/^\d+ \d+$/);
      const agentPid = Number(pidLine.split(' ')[0]);
      await eventually(() => expect(alive(agentPid)).toBe(false), 10_000, 20);
    });
  }

  it('session/new refused with auth required: the run fails saying the agent needs a login, and by which methods', async () => {
    const r = await attached('authy', 'answer x');
    const error =
      'the agent needs a login: it answered session/new with auth required (code -32000); log in to it by one of its ' +
      'methods, then run again: Log in with a browser (browser): run `scripted login`; API key (api-key): set SCRIPTED_API_KEY';
    expect(r.code).toBe(1);
    expect(await done(r.id)).toMatchObject({ status: 'failed', error });
  });

  it('an agent that exits at once: the run fails with its exit and its stderr lines', async () => {
    const r = await attached('exiter', 'answer x');
    const error =
      'the agent exited during initialize (exit code 2); its last stderr lines:\n' +
      'scripted agent: no config found\nscripted agent: giving up';
    expect(r.code).toBe(1);
    expect(await done(r.id)).toMatchObject({ status: 'failed', error });
  });

  it('lines on stdout that are not JSON-RPC messages are skipped; the slot log counts them', async () => {
    const r = await attached('scripted', 'garbage');
    expect(r.code).toBe(0);
    expect(await done(r.id)).toMatchObject({ status: 'completed', response: 'after garbage' });
    const logs = await hall(['logs', r.id], root);
    expect(logs.stdout).toContain(
      "raider acp-client: skipped 3 lines of the agent's stdout that were not JSON-RPC messages " +
        '(the first: Debugger listening on ws://127.0.0.1:9229)',
    );
  });

  it('a message over 10 MiB fails the run, the agent is gone, and the hall runs the next mission', async () => {
    const r = await attached('huge', 'huge');
    const error = 'the agent sent a message over 10 MiB during session/prompt; the bridge stopped reading it';
    expect(r.code).toBe(1);
    expect(await done(r.id)).toMatchObject({ status: 'failed', error });
    const agentPid = Number(fs.readFileSync(path.join(root, 'huge.pid'), 'utf8').split(' ')[0]);
    await eventually(() => expect(alive(agentPid)).toBe(false), 10_000, 20);
    const next = await attached('huge', 'answer still here');
    expect(await done(next.id)).toMatchObject({ status: 'completed', response: 'still here' });
  });
});

describe.concurrent('raider acp-client by hand', () => {
  it('--help prints the usage (exit 0); a call without an agent is a usage error (exit 2), nothing on stdout', async () => {
    const [help, bad] = await Promise.all([
      runCli(['acp-client', '--help'], { cwd: REPO }),
      runCli(['acp-client', '--', 'hi'], { cwd: REPO }),
    ]);
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toMatch(/^usage: raider acp-client /);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toContain('raider acp-client: --agent-command is required');
  });

  it('without --stream-json it prints the answer', async () => {
    const r = await runCli(['acp-client', '--agent-command', SCRIPTED_ACP_AGENT, '--', 'answer', 'by', 'hand'], { cwd: REPO });
    expect(r).toMatchObject({ code: 0, stdout: 'by hand\n' });
  });
});
