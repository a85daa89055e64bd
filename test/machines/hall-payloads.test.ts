import { describe, expect, it } from 'vitest';
import type { Mission } from '../../src/domain/mission.js';
import {
  bindingQueuedEvent,
  bindingQueuedReply,
  cancelledWaitingReply,
  doneEvent,
  droppedEvent,
  endEvents,
  endOps,
  liveRunOf,
  movedEvent,
  movedReply,
  refusedEvent,
  refusedReply,
  slotQueuedEvent,
  slotQueuedReply,
  spawnedEvent,
  spawnedReply,
  unstartedReply,
} from '../../src/machines/hall-payloads.js';
import type { RunSpawnedReport } from '../../src/machines/run.machine.js';
import {
  HallSessionError,
  RaiderDone,
  RaiderDropped,
  RaiderMoved,
  RaiderQueued,
  RaiderRefused,
  RaiderSpawned,
} from '../../src/protocol/events.js';
import { CancelQueuedReply, QueueFrontReply, SpawnQueuedReply, SpawnRefusedReply, SpawnStartedReply } from '../../src/protocol/replies.js';

const entry: Mission = { id: 'm1', name: '1bjorn', mission: 'look around' };
const boundEntry: Mission = { ...entry, binding: 'telegram:ops:42' };

function spawned(extra: Partial<RunSpawnedReport> = {}): RunSpawnedReport {
  return {
    type: 'run.spawned',
    runId: '1bjorn-1764643200',
    slot: '1bjorn',
    baseName: 'bjorn',
    pid: 4242,
    entry,
    sessionCreated: false,
    eventsPath: '/hall/.raider-hall/logs/1bjorn-1764643200.events.jsonl',
    logPath: '/hall/.raider-hall/logs/1bjorn.log',
    startedAt: 1764643200123,
    adopted: false,
    ...extra,
  };
}

/** Each payload is checked against its wire schema, strictly: no field the protocol does not name. */
function strictly<T>(schema: { strict(): { parse(v: unknown): T } }, value: unknown): T {
  return schema.strict().parse(value);
}

describe('hall payloads: what the hall says, built from what it heard', () => {
  it('reports a started run on the bus, in the reply and in the registry, with its binding only when it has a session', () => {
    const unbound = spawned({ binding: 'slot:1bjorn' });
    expect(strictly(RaiderSpawned, spawnedEvent(unbound))).toEqual({
      type: 'raider.spawned',
      id: '1bjorn-1764643200',
      pid: 4242,
      slot: '1bjorn',
      base_name: 'bjorn',
      mission_id: 'm1',
    });
    const bound = spawned({ binding: 'slot:1bjorn', session: 's-1' });
    expect(strictly(SpawnStartedReply, spawnedReply(bound))).toEqual({
      id: '1bjorn-1764643200',
      pid: 4242,
      slot: '1bjorn',
      events_path: '/hall/.raider-hall/logs/1bjorn-1764643200.events.jsonl',
      mission_id: 'm1',
      session: 's-1',
      binding: 'slot:1bjorn',
    });
    expect(liveRunOf(bound)).toEqual({
      id: '1bjorn-1764643200',
      slot: '1bjorn',
      base_name: 'bjorn',
      pid: 4242,
      mission: 'look around',
      mission_id: 'm1',
      session: 's-1',
      binding: 'slot:1bjorn',
      events_path: '/hall/.raider-hall/logs/1bjorn-1764643200.events.jsonl',
      log_path: '/hall/.raider-hall/logs/1bjorn.log',
      started_at: 1764643200123,
    });
  });

  it('says raider.done with the outcome fields it has, and cancel_requested only when a cancel was asked for', () => {
    const outcome = { status: 'completed', exit_code: 0, signaled: 0 as const, response: 'ok', session: 's-1' };
    const done = doneEvent({ runId: 'r1', slot: '1bjorn', pid: 7, entry, binding: 'slot:1bjorn', session: 's-1', outcome });
    expect(strictly(RaiderDone, done)).toEqual({
      type: 'raider.done',
      id: 'r1',
      slot: '1bjorn',
      pid: 7,
      exit_code: 0,
      signaled: 0,
      status: 'completed',
      response: 'ok',
      session: 's-1',
      binding: 'slot:1bjorn',
      mission_id: 'm1',
    });
    const cancelled = doneEvent({
      runId: 'r1',
      slot: '1bjorn',
      pid: 7,
      entry,
      outcome: { status: 'failed', exit_code: 0, signaled: 1, error: 'killed', hall_stop: 'cancelled by the hall' },
      cancelRequested: true,
    });
    expect(strictly(RaiderDone, cancelled)).toMatchObject({ error: 'killed', hall_stop: 'cancelled by the hall', cancel_requested: true });
    expect(cancelled).not.toHaveProperty('binding');
    expect(unstartedReply({ status: 'failed', exit_code: 0, signaled: 0 })).toEqual({
      error: 'command failed: the raider could not be started',
    });
  });

  it("a bound run whose raider could not continue the binding's session ends with hall.session_error before raider.done", () => {
    const outcome = { status: 'completed', exit_code: 0, signaled: 0 as const, session: 's-1', session_error: 'the agent lost it' };
    const [lost, done] = endEvents({ runId: 'r1', slot: '1bjorn', pid: 7, entry, binding: 'slot:1bjorn', session: 's-1', outcome });
    expect(strictly(HallSessionError, lost)).toEqual({
      type: 'hall.session_error',
      binding: 'slot:1bjorn',
      error: 'the agent lost it',
      id: 'r1',
    });
    expect(strictly(RaiderDone, done)).toMatchObject({ type: 'raider.done', id: 'r1', status: 'completed' });
    const plain = endEvents({
      runId: 'r1',
      slot: '1bjorn',
      pid: 7,
      entry,
      binding: 'slot:1bjorn',
      session: 's-1',
      outcome: { ...outcome, session_error: undefined },
    });
    expect(plain.map((e) => e.type)).toEqual(['raider.done']);
  });

  it("records a bound run's agent session with its cost so far for the binding's next run, and raider.done keeps usage as said", () => {
    const usage = { context_used: 900, cost: { amount: 1.25, currency: 'USD' }, run_cost: { amount: 0.75, currency: 'USD' } };
    const agent_session = { id: 'a-1', agent: 'agent-cmd' };
    const outcome = { status: 'completed', exit_code: 0, signaled: 0 as const, session: 's-1', usage, agent_session };
    const run = { runId: 'r1', slot: '1bjorn', pid: 7, entry, binding: 'slot:1bjorn', session: 's-1', outcome };
    expect(endOps(run)).toEqual([
      { op: 'set', ns: 'acp_agent', key: 's-1', value: { v: 1, agent: 'agent-cmd', session: 'a-1', cost: usage.cost } },
      { op: 'end', runId: 'r1' },
    ]);
    expect(strictly(RaiderDone, doneEvent(run)).usage).toEqual(usage);
    // An agent that said no cost leaves no figure: the next run's share is its whole cost.
    const unpriced = { ...run, outcome: { ...outcome, usage: { context_used: 900 } } };
    expect(endOps(unpriced)[0]).toEqual({ op: 'set', ns: 'acp_agent', key: 's-1', value: { v: 1, agent: 'agent-cmd', session: 'a-1' } });
  });

  it('adds what a worktree run left to raider.done: worktree, branch, base, commits, changed', () => {
    const worktree = {
      worktree: '/hall/.raider-hall/worktrees/bjorn-1',
      branch: 'raider/bjorn-1',
      base: 'a'.repeat(40),
      commits: 2,
      changed: ['src/a.ts', 'notes.md'],
      wip: true,
      kept: false,
    };
    const done = doneEvent({
      runId: 'bjorn-1',
      slot: 'bjorn',
      pid: 7,
      entry,
      outcome: { status: 'completed', exit_code: 0, signaled: 0, worktree },
    });
    expect(strictly(RaiderDone, done)).toMatchObject({
      worktree: '/hall/.raider-hall/worktrees/bjorn-1',
      branch: 'raider/bjorn-1',
      base: 'a'.repeat(40),
      commits: 2,
      changed: ['src/a.ts', 'notes.md'],
      wip_commit: true,
      worktree_kept: false,
    });
    expect(
      doneEvent({ runId: 'r1', slot: 'bjorn', pid: 7, entry, outcome: { status: 'completed', exit_code: 0, signaled: 0 } }),
    ).not.toHaveProperty('branch');
  });

  it('reports a refusal on the bus and to the client', () => {
    const out = {
      kind: 'refused' as const,
      runId: 'bjorn-1',
      slot: 'bjorn',
      baseName: 'bjorn',
      entry: boundEntry,
      binding: 'telegram:ops:42',
      reason: 'provider_not_alias' as const,
      error: 'provider http://x is not an alias',
      queued: true,
      endedAt: 5,
    };
    expect(strictly(RaiderRefused, refusedEvent(out))).toEqual({
      type: 'raider.refused',
      status: 'refused',
      slot: 'bjorn',
      name: '1bjorn',
      binding: 'telegram:ops:42',
      reason: 'provider_not_alias',
      error: 'provider http://x is not an alias',
      queued: true,
      mission_id: 'm1',
    });
    expect(strictly(SpawnRefusedReply, refusedReply(out))).toEqual({
      status: 'refused',
      reason: 'provider_not_alias',
      error: 'provider http://x is not an alias',
    });
  });

  it('reports a waiting mission under its slot, or under its raider name and binding', () => {
    const slotQueued = { type: 'slot.queued' as const, slot: '1bjorn', entry, depth: 3 };
    expect(strictly(RaiderQueued, slotQueuedEvent(slotQueued))).toEqual({
      type: 'raider.queued',
      slot: '1bjorn',
      queue_depth: 3,
      mission_id: 'm1',
    });
    expect(strictly(SpawnQueuedReply, slotQueuedReply(slotQueued))).toEqual({
      queued: 1,
      slot: '1bjorn',
      queue_depth: 3,
      position: 3,
      mission_id: 'm1',
    });
    const bindingQueued = { type: 'binding.queued' as const, binding: 'telegram:ops:42', entry: boundEntry, depth: 2 };
    expect(strictly(RaiderQueued, bindingQueuedEvent(bindingQueued))).toEqual({
      type: 'raider.queued',
      slot: '1bjorn',
      binding: 'telegram:ops:42',
      queue_depth: 2,
      mission_id: 'm1',
    });
    expect(strictly(SpawnQueuedReply, bindingQueuedReply(bindingQueued))).toEqual({
      queued: 1,
      slot: '1bjorn',
      binding: 'telegram:ops:42',
      queue_depth: 2,
      position: 2,
      mission_id: 'm1',
    });
  });

  it('reports a dropped mission with its binding when it had one', () => {
    expect(strictly(RaiderDropped, droppedEvent(entry, 'cancelled'))).toEqual({
      type: 'raider.dropped',
      mission_id: 'm1',
      slot: '1bjorn',
      reason: 'cancelled',
    });
    expect(strictly(RaiderDropped, droppedEvent(boundEntry, 'binding_closed'))).toMatchObject({ binding: 'telegram:ops:42' });
    expect(strictly(CancelQueuedReply, cancelledWaitingReply(boundEntry))).toEqual({
      dropped: 1,
      mission_id: 'm1',
      slot: '1bjorn',
      binding: 'telegram:ops:42',
    });
  });

  it('reports a mission moved to the front, with the binding queue it waits in when it has one', () => {
    expect(strictly(RaiderMoved, movedEvent(entry, undefined, 3))).toEqual({
      type: 'raider.moved',
      mission_id: 'm1',
      slot: '1bjorn',
      position: 1,
      from: 3,
    });
    expect(strictly(QueueFrontReply, movedReply(boundEntry, 'telegram:ops:42', 2))).toEqual({
      moved: 1,
      mission_id: 'm1',
      slot: '1bjorn',
      binding: 'telegram:ops:42',
      position: 1,
      from: 2,
    });
  });
});
