// The ACP and MCP faces on a shared cluster (docs/cluster.md, "ACP across halls"): two
// halls on one embedded PostgreSQL, the client connected to hall-a, whose one
// room (max_running: 1) a long run holds, so every prompt runs on hall-b. The
// client still gets its run's stream from hall-a, and the permission
// questions of the raider on hall-b, whose answers reach that raider. An MCP
// client of hall-a sees and waits for the runs of its missions on hall-b.
import fs from 'node:fs';
import path from 'node:path';
import { methods } from '@agentclientprotocol/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acpAdapter } from '../../src/adapters/acp/acp-adapter.js';
import { dashboardAdapter } from '../../src/adapters/dashboard/dashboard-adapter.js';
import { mcpAdapter } from '../../src/adapters/mcp/mcp-adapter.js';
import { connectSocket } from '../mcp/mcp-support.js';
import { connectAcp, initialize, newSession, prompt, updatesOf, type AcpTestClient } from '../acp/acp-support.js';
import { usePostgresServer } from '../support/postgres-server.js';
import { startTestHall, tempRoot, type EventTap, type Json, type TestHall } from '../support/test-hall.js';

const server = usePostgresServer();

function hallConfig(url: string, id: string, extra = ''): string {
  return (
    `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: team-a\ncluster_mode: shared\n` +
    `hall_id: ${id}\nlease_seconds: 5\nmax_running: 1\npermission_timeout: 1\n${extra}`
  );
}

let hallA: TestHall;
let hallB: TestHall;
let eventsA: EventTap;
let acp: AcpTestClient;
let release: string;
let url: string;

beforeAll(async () => {
  url = await server.freshDatabase();
  hallA = await startTestHall({
    config: hallConfig(url, 'hall-a', 'mcp: { enable: true }\n'),
    adapters: [acpAdapter, mcpAdapter],
    env: { RAIDER_HALL_ACP_PORT: '0' },
  });
  eventsA = await hallA.events('raider.');
  // hall-a is alone: it takes the long run, and has no room left for the prompts.
  release = path.join(tempRoot(), 'release');
  const busy = await hallA.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${release}` });
  await eventsA.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === busy.mission_id);
  // hall-b asks its dashboard too (dashboard.questions): the first answer wins, from either hall.
  hallB = await startTestHall({
    config: hallConfig(url, 'hall-b', 'dashboard: { listen: "127.0.0.1:0", questions: true }\n'),
    adapters: [dashboardAdapter],
  });
  acp = await connectAcp({ port: (await hallA.request({ cmd: 'status' })).acp.port as number });
  await initialize(acp);
}, 60_000);

afterAll(async () => {
  acp?.close();
  eventsA?.close();
  if (release) fs.writeFileSync(release, '');
  await Promise.all([hallA?.stop(), hallB?.stop()]);
}, 60_000);

describe('ACP on a shared cluster, the run on another hall', () => {
  it('streams the run of a prompt that runs on the other hall: its tool call, its text and its end', async () => {
    const sessionId = await newSession(acp, hallA.root);
    expect(await prompt(acp, sessionId, 'tool echo hi')).toEqual({ stopReason: 'end_turn' });
    const spawned = eventsA.all.find((e) => e.type === 'raider.spawned' && e.slot === 'bjorn' && e.hall === 'hall-b');
    expect(spawned).toBeDefined();
    const updates = updatesOf(acp, sessionId);
    // The tool call comes only from the run's events (the end alone would give the final text).
    const call = updates.find((u: Json) => u.sessionUpdate === 'tool_call');
    expect(call).toMatchObject({ title: 'bash: echo hi', status: 'in_progress' });
    expect(
      updates.some((u: Json) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === call!.toolCallId && u.status === 'completed'),
    ).toBe(true);
    const texts = updates.filter((u: Json) => u.sessionUpdate === 'agent_message_chunk').map((u: Json) => u.content.text);
    expect(texts).toEqual(['tool ran']);
  });

  it("puts the questions of the raider on the other hall to the client, and the client's answers reach that raider", async () => {
    const sessionId = await newSession(acp, hallA.root);
    const asked = acp.permissions.length;
    acp.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    expect(await prompt(acp, sessionId, 'ask 2')).toEqual({ stopReason: 'end_turn' });
    const done = await eventsA.waitFor((e) => e.type === 'raider.done' && e.hall === 'hall-b' && e.binding === `acp:${sessionId}`);
    expect(JSON.parse(done.response)).toEqual(['once', 'once']);
    expect(acp.permissions.slice(asked).map((p: Json) => p.toolCall.title)).toEqual(['echo 1', 'echo 2']);
  });

  it('answers no when the client does not answer within permission_timeout', async () => {
    const sessionId = await newSession(acp, hallA.root);
    acp.onPermission = () => new Promise(() => {});
    const t0 = Date.now();
    expect(await prompt(acp, sessionId, 'ask 1')).toEqual({ stopReason: 'end_turn' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);
    const done = await eventsA.waitFor((e) => e.type === 'raider.done' && e.hall === 'hall-b' && e.binding === `acp:${sessionId}`);
    expect(JSON.parse(done.response)).toEqual(['no']);
  });

  it("the run's own hall answers first (its socket, with dashboard.questions): the raider gets that answer, the client's question is withdrawn", async () => {
    const sessionId = await newSession(acp, hallA.root);
    const questionsB = await hallB.events('permission.');
    let withdrawn!: (reason: unknown) => void;
    const withdrawal = new Promise((resolve) => (withdrawn = resolve));
    acp.onPermission = (_params, signal) => {
      signal.addEventListener('abort', () => withdrawn(signal.reason), { once: true });
      return new Promise(() => {});
    };
    const asked = acp.permissions.length;
    const turn = prompt(acp, sessionId, 'ask 1');
    const question = await questionsB.waitFor((e) => e.type === 'permission.asked');
    // The client is asked too before hall-b's socket answers.
    await expect.poll(() => acp.permissions.length).toBe(asked + 1);
    expect(await hallB.request({ cmd: 'answer', run: question.id, question: 'q1', answer: 'session' })).toMatchObject({ answered: 1 });
    expect(await turn).toEqual({ stopReason: 'end_turn' });
    await withdrawal;
    const done = await eventsA.waitFor((e) => e.type === 'raider.done' && e.binding === `acp:${sessionId}`);
    expect(JSON.parse(done.response)).toEqual(['session']);
    questionsB.close();
  });
  it('runs the prompts in the ACP session itself on the other hall; session/load on hall-a brings the turns written there', async () => {
    const sessionId = await newSession(acp, hallA.root);
    await prompt(acp, sessionId, 'journal one');
    await prompt(acp, sessionId, 'journal two');
    const done = eventsA.all.filter((e) => e.type === 'raider.done' && e.binding === `acp:${sessionId}`);
    expect(done.map((e) => [e.hall, e.session])).toEqual([
      ['hall-b', sessionId],
      ['hall-b', sessionId],
    ]);
    expect(JSON.parse(done[1]!.response)).toEqual([`one@${hallB.root}`, `two@${hallB.root}`]);
    const journal = path.join(hallA.root, '.raider', 'sessions', `${sessionId}.jsonl`);
    expect(fs.readFileSync(journal, 'utf8')).not.toContain('"turn"');
    await acp.conn.agent.request(methods.agent.session.load, { sessionId, cwd: hallA.root, mcpServers: [] });
    const turns = fs
      .readFileSync(journal, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"turn"'));
    expect(turns.map((line) => JSON.parse(line).text)).toEqual(['one', 'two']);
  });
  it('a run on the other hall that fails without a result: the prompt says what its raider said there', async () => {
    const sessionId = await newSession(acp, hallA.root);
    const failure = await prompt(acp, sessionId, 'stderr-fail no engine here').then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toMatchObject({ code: -32000, message: expect.stringMatching(/^raider run failed: no engine here\n/) });
  });
  it("session/cancel stops the run on the other hall and drops the session's prompt waiting in the cluster's queue", async () => {
    const sessionId = await newSession(acp, hallA.root);
    const running = prompt(acp, sessionId, 'wait 30');
    const spawned = await eventsA.waitFor((e) => e.type === 'raider.spawned' && e.binding === `acp:${sessionId}` && e.hall === 'hall-b');
    // One mission at a time per binding: the second waits in the cluster's queue.
    const waiting = prompt(acp, sessionId, 'answer never');
    const queued = await eventsA.waitFor(
      (e) => e.type === 'raider.queued' && e.binding === `acp:${sessionId}` && e.mission_id !== spawned.mission_id,
    );
    await acp.conn.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await running).toEqual({ stopReason: 'cancelled' });
    expect(await waiting).toEqual({ stopReason: 'cancelled' });
    const done = await eventsA.waitFor((e) => e.type === 'raider.done' && e.binding === `acp:${sessionId}`);
    expect(done).toMatchObject({ hall: 'hall-b', cancel_requested: true, signaled: 1 });
    await eventsA.waitFor((e) => e.type === 'raider.dropped' && e.mission_id === queued.mission_id);
  });
});

describe('MCP on a shared cluster, the run on another hall', () => {
  it('wait_for_raider follows a mission and a run that run on the other hall; list_raiders shows the run', async () => {
    const mcp = await connectSocket(path.join(hallA.root, '.raider-hall.mcp'));
    try {
      const quick = await mcp.call('spawn_raider', { name: 'bjorn', mission: 'answer from b' });
      expect(quick.json).toMatchObject({ queued: 1 });
      const byMission = await mcp.call('wait_for_raider', { id: quick.json!.mission_id, timeout_s: 20 });
      expect(byMission.json).toMatchObject({ type: 'raider.done', hall: 'hall-b', status: 'completed', response: 'from b' });

      const release2 = path.join(tempRoot(), 'release');
      const slow = await mcp.call('spawn_raider', { name: 'bjorn', mission: `until ${release2}` });
      const spawned = await eventsA.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === slow.json!.mission_id);
      expect(spawned.hall).toBe('hall-b');
      expect((await mcp.call('list_raiders')).json!.raiders).toContainEqual(expect.objectContaining({ id: spawned.id, hall: 'hall-b' }));
      expect((await mcp.call('wait_for_raider', { id: spawned.id, timeout_s: 0.2 })).json).toMatchObject({ status: 'still running' });
      const waiting = mcp.call('wait_for_raider', { id: spawned.id, timeout_s: 20 });
      fs.writeFileSync(release2, '');
      expect((await waiting).json).toMatchObject({ type: 'raider.done', id: spawned.id, hall: 'hall-b', status: 'completed' });
      // Ended on the other hall before this wait: answered with its outcome (the relayed raider.done this hall kept).
      expect((await mcp.call('wait_for_raider', { id: spawned.id, timeout_s: 1 })).json).toMatchObject({
        type: 'raider.done',
        id: spawned.id,
        status: 'completed',
        ended_before_wait: true,
      });
    } finally {
      await mcp.close();
    }
  });

  it("wait_for_raider on a hall that started after the run ended on another answers from the cluster's copy of its events", async () => {
    const quick = await hallA.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer from the copy' });
    const done = await eventsA.waitFor((e) => e.type === 'raider.done' && e.mission_id === quick.mission_id);
    expect(done.hall).toBe('hall-b');
    // A hall that never saw that raider.done, and has no file of a run that ran on hall-b.
    const hallC = await startTestHall({ config: hallConfig(url, 'hall-c', 'mcp: { enable: true }\n'), adapters: [mcpAdapter] });
    const mcp = await connectSocket(path.join(hallC.root, '.raider-hall.mcp'));
    try {
      expect((await mcp.call('wait_for_raider', { id: done.id, timeout_s: 1 })).json).toMatchObject({
        type: 'raider.done',
        id: done.id,
        status: 'completed',
        response: 'from the copy',
        ended_before_wait: true,
        source: 'cluster',
      });
    } finally {
      await mcp.close();
      await hallC.stop();
    }
  });
});
