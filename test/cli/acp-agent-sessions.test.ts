/**
 * A binding continues one session of its ACP agent (docs/agents.md,
 * "Sessions across runs"): the hall records the agent's session id with the
 * binding's session in its state store, and the next run opens it with
 * session/resume, else session/load, as the agent advertises; an agent that
 * cannot or will not gets a new session, and the run says so. The agent is
 * test/fixtures/scripted-acp-agent.mjs with its sessions in a directory, so a
 * later process of it can go on with one; `recall` answers the session's
 * earlier missions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKENDS, useHallBackend } from '../support/hall-backends.js';
import { tapEvents, type EventTap, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import {
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
  startHallProcess,
} from './cli-helpers.js';
import { bearer, boardOf, httpRequest } from '../dashboard/dashboard-support.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const agentEntry = (continues: string) =>
  `{ acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_SESSIONS: agent-sessions, SCRIPTED_ACP_CONTINUE: "${continues}" } } }`;
const CONFIG = `raiders:
  resumer: ${agentEntry('resume,load')}
  loader: ${agentEntry('load')}
  forgetful: ${agentEntry('')}
`;

let root = '';
let hallProcess: HallProcess | undefined;
let tap: EventTap | undefined;

beforeAll(async () => {
  root = hallRoot(CONFIG);
  fs.mkdirSync(path.join(root, 'agent-sessions'));
  hallProcess = await startHallProcess(root);
  tap = await doneTap(root);
});

afterAll(async () => {
  tap?.close();
  expect((await hallProcess?.stop())?.code).toBe(0);
  removeRoots();
});

type Json = Record<string, unknown>;

/** Runs `mission` in `name` and waits for its raider.done. */
async function run(name: string, mission: string): Promise<{ id: string; done: Json }> {
  if (!tap) throw new Error('no hall');
  const spawned = await request(socketOf(root), { cmd: 'spawn', name, mission });
  return { id: spawned.id, done: await doneOf(tap, spawned.id) };
}

function runEvents(id: string): Json[] {
  return fs
    .readFileSync(eventsFile(root, id), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Json);
}

function sessionEvent(id: string): Json | undefined {
  return runEvents(id).find((e) => e.type === 'session');
}

async function logs(id: string): Promise<string> {
  return (await hall(['logs', id], root)).stdout;
}

describe.concurrent("a binding's runs continue one session of the agent", () => {
  it('a numbered slot: the next run resumes the session (session/resume), across processes of the agent', async () => {
    const first = await run('1resumer', 'answer one');
    expect(first.done).toMatchObject({ status: 'completed', response: 'one' });
    const opened = sessionEvent(first.id);
    expect(opened).toMatchObject({ opened: 'new', agent_session: expect.stringMatching(/^s-[0-9a-f]+$/) });
    const second = await run('1resumer', 'recall');
    expect(second.done).toMatchObject({ status: 'completed', response: 'earlier: answer one' });
    expect(sessionEvent(second.id)).toEqual(expect.objectContaining({ opened: 'resumed', agent_session: opened?.agent_session }));
    expect(await logs(second.id)).toContain(`scripted agent: resumed ${String(opened?.agent_session)}`);
    // The hall session is the binding's; the hall keeps its agent session in its state store, no file beside the journal.
    expect(second.done.session).toBe(first.done.session);
    expect(fs.existsSync(path.join(root, '.raider', 'sessions', `${String(first.done.session)}.acp.json`))).toBe(false);
    // The bridge says in its run document which agent session it went on with, for the hall to record.
    expect(runEvents(second.id).at(-1)).toMatchObject({
      type: 'run.finished',
      agent_session: { id: opened?.agent_session, agent: SCRIPTED_ACP_AGENT },
    });
  });

  it("an agent that can only load: session/load, and its replay of the conversation is not the run's output", async () => {
    await run('1loader', 'answer one');
    await run('1loader', 'answer two');
    const third = await run('1loader', 'recall');
    expect(third.done).toMatchObject({ status: 'completed', response: 'earlier: answer one | answer two' });
    const events = runEvents(third.id);
    expect(events.find((e) => e.type === 'session')).toMatchObject({ opened: 'loaded' });
    expect(events.filter((e) => e.type === 'message.chunk').map((e) => e.content)).toEqual(['earlier: answer one | answer two']);
    expect(await logs(third.id)).toContain('scripted agent: loaded s-');
  });

  it('an agent that can neither resume nor load: a new session each run, and the run says so', async () => {
    await run('1forgetful', 'answer one');
    const second = await run('1forgetful', 'recall');
    expect(second.done).toMatchObject({ status: 'completed', response: 'earlier: none' });
    const text = expect.stringMatching(
      /^the agent can neither resume nor load a session, so its session s-[0-9a-f]+ was not continued; a new session was started$/,
    );
    expect(runEvents(second.id).filter((e) => e.type === 'note')).toEqual([expect.objectContaining({ setting: 'session', text })]);
    expect(sessionEvent(second.id)).toMatchObject({ opened: 'new' });
    expect(await logs(second.id)).toMatch(/raider acp-client: the agent can neither resume nor load a session/);
  });

  it('a binding whose agent lost its session: a new session, said on the bus (hall.session_error), in the events and the slot log; the next run continues the new one', async () => {
    const first = await run('2resumer', 'answer one');
    const lost = String(sessionEvent(first.id)?.agent_session);
    fs.rmSync(path.join(root, 'agent-sessions', lost));
    const errors = await tapEvents(socketOf(root), 'hall.session_error');
    const second = await run('2resumer', 'recall');
    expect(second.done).toMatchObject({ status: 'completed', response: 'earlier: none' });
    const text =
      `the agent did not open its session ${lost} (session/resume: Resource not found: session ${lost} (code -32002); ` +
      `session/load: Resource not found: session ${lost} (code -32002)); a new session was started`;
    expect(await errors.waitFor((e) => e.id === second.id, 10_000)).toMatchObject({ binding: 'slot:2resumer', error: text });
    errors.close();
    const note = runEvents(second.id).find((e) => e.type === 'note');
    expect(note).toMatchObject({ setting: 'session', text });
    expect(await logs(second.id)).toContain(`raider acp-client: the agent did not open its session ${lost}`);
    const third = await run('2resumer', 'recall');
    expect(third.done).toMatchObject({ response: 'earlier: recall' });
    expect(sessionEvent(third.id)).toMatchObject({ opened: 'resumed' });
  });

  it('session reset: the next run starts a new agent session', async () => {
    await run('3resumer', 'answer one');
    expect((await hall(['session', 'reset', 'slot:3resumer'], root)).code).toBe(0);
    const next = await run('3resumer', 'recall');
    expect(next.done).toMatchObject({ status: 'completed', response: 'earlier: none' });
    expect(sessionEvent(next.id)).toMatchObject({ opened: 'new' });
    expect(runEvents(next.id).filter((e) => e.type === 'note')).toEqual([]);
  });

  it('a plain name has no binding: each run gets a new session', async () => {
    await run('resumer', 'answer one');
    const next = await run('resumer', 'recall');
    expect(next.done).toMatchObject({ status: 'completed', response: 'earlier: none' });
    expect(sessionEvent(next.id)).toMatchObject({ opened: 'new' });
  });

  it('an explicit binding (as a cron job or a chat has) continues its session too', async () => {
    const spawn = (mission: string) => request(socketOf(root), { cmd: 'spawn', name: 'resumer', mission, binding: 'cron:nightly' });
    if (!tap) throw new Error('no hall');
    await doneOf(tap, (await spawn('answer one')).id);
    const second = await spawn('recall');
    expect(await doneOf(tap, second.id)).toMatchObject({ status: 'completed', response: 'earlier: answer one' });
  });

  it('the bridge killed (SIGKILL) before its run.finished: the next run of the binding resumes the session its events named', async () => {
    if (!tap) throw new Error('no hall');
    const release = path.join(root, 'release-5');
    const spawned = await request(socketOf(root), { cmd: 'spawn', name: '5resumer', mission: `until ${release}` });
    const opened = await eventually(
      () => {
        const event = fs
          .readFileSync(eventsFile(root, spawned.id), 'utf8')
          .split('\n')
          .find((line) => line.includes('"type":"session"') && line.endsWith('}'));
        expect(event).toBeDefined();
        return JSON.parse(String(event)) as Json;
      },
      30_000,
      20,
    );
    const running = (await request(socketOf(root), { cmd: 'ps' })).raiders as Json[];
    const bridge = running.find((r) => r.id === spawned.id);
    if (typeof bridge?.pid !== 'number') throw new Error('no bridge pid');
    process.kill(bridge.pid, 'SIGKILL');
    expect(await doneOf(tap, spawned.id)).toMatchObject({ status: 'failed' });
    // The agent, left alone, ends its turn once released.
    fs.writeFileSync(release, '');
    const next = await run('5resumer', 'recall');
    expect(next.done).toMatchObject({ status: 'completed', response: `earlier: until ${release}` });
    expect(sessionEvent(next.id)).toMatchObject({ opened: 'resumed', agent_session: opened?.agent_session });
  });

  it('the agent crashed mid-turn: the next run of the binding resumes its session', async () => {
    const crashed = await run('4resumer', 'crash');
    expect(crashed.done).toMatchObject({ status: 'failed' });
    const next = await run('4resumer', 'recall');
    expect(next.done).toMatchObject({ status: 'completed', response: 'earlier: crash' });
    expect(sessionEvent(next.id)).toMatchObject({ opened: 'resumed', agent_session: sessionEvent(crashed.id)?.agent_session });
  });
});

describe.each(BACKENDS)('a session across a kill -9 of the hall, state on %s', (name) => {
  const backend = useHallBackend(name);
  it('the adopted run completes, and the next run of the binding resumes the same agent session', async () => {
    const own = hallRoot(CONFIG);
    fs.mkdirSync(path.join(own, 'agent-sessions'));
    const env = await backend.env();
    const first = await startHallProcess(own, env);
    const release = path.join(own, 'release');
    const spawned = await request(socketOf(own), { cmd: 'spawn', name: '1resumer', mission: `until ${release}` });
    await eventually(() => expect(fs.readFileSync(eventsFile(own, spawned.id), 'utf8')).toContain('"session"'), 30_000, 20);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startHallProcess(own, env);
    try {
      const done = await tapEvents(socketOf(own), 'raider.done');
      fs.writeFileSync(release, '');
      expect(await doneOf(done, spawned.id)).toMatchObject({ status: 'completed' });
      const next = await request(socketOf(own), { cmd: 'spawn', name: '1resumer', mission: 'recall' });
      expect(await doneOf(done, next.id)).toMatchObject({ status: 'completed', response: `earlier: until ${release}` });
      const events = fs.readFileSync(eventsFile(own, next.id), 'utf8');
      expect(events).toContain('"opened":"resumed"');
      done.close();
    } finally {
      expect((await second.stop()).code).toBe(0);
    }
  });
});

describe.each(BACKENDS)("each run of a binding says its own share of its agent session's cost, state on %s", (name) => {
  const backend = useHallBackend(name);
  it('run_cost is the cost less the one recorded at the run before (across a hall restart), the charts sum it; after session reset it is the whole cost', async () => {
    const own = hallRoot(`${CONFIG}dashboard: { listen: "127.0.0.1:0" }\n`);
    fs.mkdirSync(path.join(own, 'agent-sessions'));
    const env = await backend.env();
    const spend = async (amount: string): Promise<Json> => {
      const done = await tapEvents(socketOf(own), 'raider.done');
      try {
        const spawned = await request(socketOf(own), { cmd: 'spawn', name: '1resumer', mission: `spend ${amount}` });
        return await doneOf(done, spawned.id);
      } finally {
        done.close();
      }
    };
    const usd = (amount: number) => ({ amount, currency: 'USD' });

    const first = await startHallProcess(own, env);
    const one = await spend('0.5');
    expect(one).toMatchObject({ status: 'completed', usage: { cost: usd(0.5), run_cost: usd(0.5) } });
    expect((await first.stop()).code).toBe(0);

    // The figure is recorded with the agent session in the durable state: a new hall process hands it on.
    const second = await startHallProcess(own, env);
    let threeSession = '';
    try {
      const two = await spend('0.75');
      expect(two).toMatchObject({ status: 'completed', session: one.session, usage: { cost: usd(1.25), run_cost: usd(0.75) } });
      // The run document says the same, so the dashboard's record of the run agrees.
      const finished =
        fs
          .readFileSync(eventsFile(own, String(two.id)), 'utf8')
          .trim()
          .split('\n')
          .at(-1) ?? '';
      expect(JSON.parse(finished)).toMatchObject({ type: 'run.finished', usage: { cost: usd(1.25), run_cost: usd(0.75) } });
      const board = await boardOf(own);
      const charts = await httpRequest(board, '/api/charts?days=1', { headers: bearer(board) });
      const rows = (JSON.parse(charts.body) as { usage: Json[] }).usage.filter((u) => u.raider === 'resumer');
      expect(rows).toEqual([expect.objectContaining({ runs: 2, reported: 2, cost: { USD: 1.25 } })]);

      expect((await hall(['session', 'reset', 'slot:1resumer'], own)).code).toBe(0);
      const three = await spend('0.3');
      expect(three).toMatchObject({ status: 'completed', usage: { cost: usd(0.3), run_cost: usd(0.3) } });
      expect(three.session).not.toBe(one.session);
      threeSession = String(three.session);
    } finally {
      expect((await second.stop()).code).toBe(0);
    }
    // The reset took the old hall session's agent session out of the state, not only out of use
    // (on PostgreSQL test/postgres/acp-agent-cluster.test.ts reads its table).
    if (name === 'files') {
      const records = JSON.parse(fs.readFileSync(path.join(own, '.raider-hall', 'state', 'acp_agent.json'), 'utf8')) as Json;
      expect(Object.keys(records)).toEqual([threeSession]);
    }
  });
});
