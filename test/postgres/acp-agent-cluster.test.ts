// A binding of an ACP agent on a shared cluster (docs/agents.md, "Sessions
// across runs"): real hall processes on separate roots against one embedded
// PostgreSQL. The hall records the agent session a bound run went on with in
// the cluster's state, so the binding's next run continues it on whichever
// hall it starts; `session reset` drops it for every hall. The agent is
// test/fixtures/scripted-acp-agent.mjs with its sessions in one directory both
// halls see (as an agent keeps them in its user's home), so any process of it
// can go on with one; `recall` answers the session's earlier missions.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { closedAfterEachTest, type HallProcess, roomHolders } from '../support/cluster-hall-processes.js';
import { queryRows as query, usePostgresServer } from '../support/postgres-server.js';
import {
  eventually,
  request,
  spawnHallProcess,
  tapEvents,
  tempRoot,
  type EventTap,
  type Json,
  SCRIPTED_ACP_AGENT,
} from '../support/hall-client.js';
import { eventsFile } from '../cli/cli-helpers.js';

vi.setConfig({ testTimeout: 120_000 });

const server = usePostgresServer();
const { halls, taps } = closedAfterEachTest();

async function startHallOn(url: string, id: string, agentSessions: string): Promise<HallProcess> {
  const root = tempRoot();
  const agent = `{ acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_SESSIONS: ${JSON.stringify(agentSessions)}, SCRIPTED_ACP_CONTINUE: resume } } }`;
  fs.writeFileSync(
    path.join(root, '.raider-hall.yml'),
    `raiders: { bjorn: {}, scripted: ${agent} }\nstorage: { postgres: "${url}" }\ncluster: team-a\ncluster_mode: shared\n` +
      `hall_id: ${id}\nlease_seconds: 2\nmax_running: 1\n`,
  );
  const child = await spawnHallProcess(root);
  const hall = { id, root, socket: path.join(root, '.raider-hall.socket'), child };
  halls.push(hall);
  return hall;
}

function sessionEvent(h: HallProcess, id: string): Json | undefined {
  return fs
    .readFileSync(eventsFile(h.root, id), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Json)
    .find((e) => e.type === 'session');
}

/**
 * Two halls of one cluster, one raider at a time each (a hall that holds a run leaves the binding's next
 * mission to the other), sharing the agent's sessions; `turn` runs a mission of the agent in `binding`.
 */
async function twoHalls(binding: string) {
  const url = await server.freshDatabase();
  const agentSessions = tempRoot();
  const one = await startHallOn(url, 'hall-1', agentSessions);
  const two = await startHallOn(url, 'hall-2', agentSessions);
  const events: EventTap = await tapEvents(one.socket, '');
  taps.push(events);
  const turn = async (mission: string): Promise<Json> => {
    const reply = await request(one.socket, { cmd: 'spawn', name: 'scripted', mission, binding });
    expect(reply).toMatchObject({ queued: 1 });
    return events.waitFor((e) => e.type === 'raider.done' && e.mission_id === reply.mission_id, 30_000);
  };
  return { url, one, two, turn, ...roomHolders(one, events, [one, two], tempRoot()) };
}

describe('an ACP agent on a shared cluster', () => {
  it("a binding's next run on another hall continues the same agent session; session reset starts a new one on every hall", async () => {
    const binding = 'cron:nightly';
    const { url, one, two, hold, release, turn } = await twoHalls(binding);

    const x = await hold('h1');
    const y = x === one ? two : one;
    const first = await turn('answer one');
    expect(first).toMatchObject({ status: 'completed', hall: y.id, binding, response: 'one' });
    const opened = sessionEvent(y, first.id);
    expect(opened).toMatchObject({ opened: 'new', agent_session: expect.stringMatching(/^s-[0-9a-f]+$/) });
    // The cluster keeps it with the binding's hall session, not a file of one hall (committed with the run's end, which the bus may tell first).
    const record = { v: 1, agent: SCRIPTED_ACP_AGENT, session: opened?.agent_session };
    await eventually(async () =>
      expect(await query(url, "SELECT key, value FROM raider_hall_kv WHERE ns = 'acp_agent'")).toEqual([
        { key: first.session, value: record },
      ]),
    );

    expect(await hold('h2')).toBe(y);
    release('h1');
    const second = await turn('recall');
    expect(second).toMatchObject({ status: 'completed', hall: x.id, session: first.session, response: 'earlier: answer one' });
    expect(sessionEvent(x, second.id)).toMatchObject({ opened: 'resumed', agent_session: opened?.agent_session });

    // Reset on the hall that ran it last: the record goes for the whole cluster, and the next run, on the other hall, starts anew.
    expect(await request(x.socket, { cmd: 'session_reset', binding })).toMatchObject({ reset: 1, binding });
    await eventually(async () => expect(await query(url, "SELECT key FROM raider_hall_kv WHERE ns = 'acp_agent'")).toEqual([]));
    expect(await hold('h3')).toBe(x);
    release('h2');
    const third = await turn('recall');
    expect(third).toMatchObject({ status: 'completed', hall: y.id, response: 'earlier: none' });
    expect(third.session).not.toBe(first.session);
    expect(sessionEvent(y, third.id)).toMatchObject({ opened: 'new' });
    expect(sessionEvent(y, third.id)?.agent_session).not.toBe(opened?.agent_session);
    release('h3');
  });

  it("a binding's next run on another hall says its own share of the agent session's cost, from the figure the cluster recorded", async () => {
    const binding = 'cron:spender';
    const { url, one, two, hold, release, turn } = await twoHalls(binding);
    const usd = (amount: number) => ({ amount, currency: 'USD' });

    const x = await hold('h1');
    const y = x === one ? two : one;
    const first = await turn('spend 0.5');
    expect(first).toMatchObject({ hall: y.id, usage: { cost: usd(0.5), run_cost: usd(0.5) } });
    // The session's cost so far is kept with its agent session, in the cluster's state.
    await eventually(async () =>
      expect(await query(url, "SELECT value FROM raider_hall_kv WHERE ns = 'acp_agent'")).toEqual([
        { value: expect.objectContaining({ cost: usd(0.5) }) },
      ]),
    );
    expect(await hold('h2')).toBe(y);
    release('h1');
    const second = await turn('spend 0.75');
    expect(second).toMatchObject({ hall: x.id, response: 'spent 1.25', usage: { cost: usd(1.25), run_cost: usd(0.75) } });
    release('h2');
  });

  it('session reset on a hall that never ran the binding resets it for the cluster', async () => {
    const binding = 'cron:weekly';
    const { url, one, two, hold, release, turn } = await twoHalls(binding);

    const x = await hold('h1');
    const y = x === one ? two : one;
    const first = await turn('answer one');
    expect(first).toMatchObject({ status: 'completed', hall: y.id, binding });
    await eventually(async () =>
      expect(await query(url, "SELECT key FROM raider_hall_kv WHERE ns = 'acp_agent'")).toEqual([{ key: first.session }]),
    );
    // x started before the binding was bound and never ran it: the cluster tells it the binding's session.
    expect(await request(x.socket, { cmd: 'session_reset', binding })).toEqual({ reset: 1, binding, session: first.session });
    await eventually(async () => {
      expect(await query(url, 'SELECT binding FROM raider_hall_sessions WHERE binding = $1', [binding])).toEqual([]);
      expect(await query(url, "SELECT key FROM raider_hall_kv WHERE ns = 'acp_agent'")).toEqual([]);
    });
    release('h1');
    const next = await turn('recall');
    expect(next).toMatchObject({ status: 'completed', response: 'earlier: none' });
    expect(next.session).not.toBe(first.session);
    // A binding the cluster has no session for is no reset.
    expect(await request(x.socket, { cmd: 'session_reset', binding: 'cron:never' })).toMatchObject({
      error: 'no session bound to cron:never',
    });
  });
});
