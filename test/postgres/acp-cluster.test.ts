// The ACP face on a shared cluster (docs/cluster.md, "ACP across halls"): two
// halls on one embedded PostgreSQL, the client connected to hall-a, whose one
// room (max_running: 1) a long run holds, so every prompt runs on hall-b. The
// client still gets its run's stream from hall-a.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acpAdapter } from '../../src/adapters/acp/acp-adapter.js';
import { connectAcp, initialize, newSession, prompt, updatesOf, type AcpTestClient } from '../acp/acp-support.js';
import { usePostgresServer } from '../support/postgres-server.js';
import { startTestHall, tempRoot, type EventTap, type Json, type TestHall } from '../support/test-hall.js';

const server = usePostgresServer();

function hallConfig(url: string, id: string, extra = ''): string {
  return (
    `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: team-a\ncluster_mode: shared\n` +
    `hall_id: ${id}\nlease_seconds: 5\nmax_running: 1\n${extra}`
  );
}

let hallA: TestHall;
let hallB: TestHall;
let eventsA: EventTap;
let acp: AcpTestClient;
let release: string;

beforeAll(async () => {
  const url = await server.freshDatabase();
  hallA = await startTestHall({ config: hallConfig(url, 'hall-a'), adapters: [acpAdapter], env: { RAIDER_HALL_ACP_PORT: '0' } });
  eventsA = await hallA.events('raider.');
  // hall-a is alone: it takes the long run, and has no room left for the prompts.
  release = path.join(tempRoot(), 'release');
  const busy = await hallA.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${release}` });
  await eventsA.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === busy.mission_id);
  hallB = await startTestHall({ config: hallConfig(url, 'hall-b') });
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
});
