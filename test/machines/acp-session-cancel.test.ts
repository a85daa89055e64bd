/**
 * session/cancel in the ACP session machine: the session's waiting prompts
 * are dropped before its running run is cancelled. The run's end frees the
 * binding; a prompt still waiting then would start and run although its
 * client heard `cancelled` (seen on a shared cluster, where the drop and
 * the cancel travel through the database side by side).
 */
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { acpSessionMachine, type AcpSessionEffect } from '../../src/machines/acp-session.machine.js';

/** A session with prompt p1 running (run-1) and p2 waiting; `effects` collects what it emits from here on. */
function runningAndWaiting() {
  const actor = createActor(acpSessionMachine, { input: { sessionId: 's-1', modeId: 'default', permissionTimeoutMs: 60_000 } });
  const effects: AcpSessionEffect[] = [];
  actor.on('*', (effect) => effects.push(effect));
  actor.start();
  actor.send({ type: 'acp.prompt', promptId: 'p1', missionId: 'm-1' });
  actor.send({ type: 'hall.spawned', missionId: 'm-1', runId: 'run-1' });
  actor.send({ type: 'acp.prompt', promptId: 'p2', missionId: 'm-2' });
  actor.send({ type: 'hall.queued', missionId: 'm-2' });
  effects.length = 0;
  return { actor, effects };
}

describe('an ACP session cancelled with a running prompt and a waiting one', () => {
  it('drops the waiting prompts first, then cancels the run, and answers the waiting prompt cancelled', () => {
    const { actor, effects } = runningAndWaiting();

    actor.send({ type: 'acp.cancel' });
    expect(effects.map((e) => e.type)).toEqual(['acp.dropQueued', 'acp.cancelRun', 'acp.answer']);
    expect(effects[1]).toEqual({ type: 'acp.cancelRun', runId: 'run-1' });
    expect(effects[2]).toEqual({ type: 'acp.answer', promptId: 'p2', answer: { stopReason: 'cancelled' } });
    actor.stop();
  });

  it('closing does the same, in the same order, then closes', () => {
    const { actor, effects } = runningAndWaiting();

    actor.send({ type: 'acp.close' });
    expect(effects.map((e) => e.type)).toEqual(['acp.dropQueued', 'acp.cancelRun', 'acp.answer', 'acp.closed']);
    expect(actor.getSnapshot().status).toBe('done');
  });
});
