import { methods } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { acpScope, prompt, updatesOf, type AcpTestClient } from './acp-support.js';

const opened = acpScope();

function setup(config = 'raiders: { bjorn: {} }\ncancel_grace: 0.5\n'): Promise<{ acp: AcpTestClient; sessionId: string }> {
  return opened.session(config);
}

function answers(sessionId: string, a: AcpTestClient): unknown {
  const chunks = updatesOf(a, sessionId).filter((u) => u.sessionUpdate === 'agent_message_chunk');
  return JSON.parse(chunks.at(-1)!.content.text as string);
}

describe('permission forwarding (ACP session/request_permission)', () => {
  it('allow once: the tool_call comes first, then the question with three options', async () => {
    const { acp: a, sessionId } = await setup();
    a.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    expect(await prompt(a, sessionId, 'ask 2')).toEqual({ stopReason: 'end_turn' });
    expect(a.permissions).toHaveLength(2);
    const first = a.permissions[0]!;
    expect(first.options).toEqual([
      { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
      { optionId: 'allow_always', name: 'Allow for this session: Bash(echo *)', kind: 'allow_always' },
      { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
    ]);
    expect(first.toolCall).toMatchObject({ title: 'echo 1', kind: 'execute', status: 'pending', rawInput: { command: 'echo 1' } });
    const ups = updatesOf(a, sessionId);
    const callIndex = ups.findIndex((u) => u.sessionUpdate === 'tool_call' && u.toolCallId === first.toolCall.toolCallId);
    expect(callIndex).toBeGreaterThanOrEqual(0);
    expect(ups[callIndex]).toMatchObject({
      status: 'pending',
      kind: 'execute',
      content: [{ type: 'content', content: { type: 'text', text: expect.stringContaining('echo 1') } }],
    });
    // The run's own tool.call for the same call becomes an update, not a second tool_call.
    expect(ups.filter((u) => u.sessionUpdate === 'tool_call' && u.toolCallId === first.toolCall.toolCallId)).toHaveLength(1);
    expect(
      ups.some((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === first.toolCall.toolCallId && u.status === 'completed'),
    ).toBe(true);
    expect(answers(sessionId, a)).toEqual(['once', 'once']);
  });

  it('allow always: the raider gets `session`, and later runs of the session are not asked again', async () => {
    const { acp: a, sessionId } = await setup();
    a.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'allow_always' } });
    await prompt(a, sessionId, 'ask 2');
    expect(answers(sessionId, a)).toEqual(['session', 'session(remembered)']);
    expect(a.permissions).toHaveLength(1);
    await prompt(a, sessionId, 'ask 1');
    expect(answers(sessionId, a)).toEqual(['session']);
    expect(a.permissions).toHaveLength(1);
  });

  it('reject, a cancelled outcome and an unknown option all refuse; the run goes on', async () => {
    const { acp: a, sessionId } = await setup();
    const outcomes = [
      { outcome: { outcome: 'selected', optionId: 'reject_once' } },
      { outcome: { outcome: 'cancelled' } },
      { outcome: { outcome: 'selected', optionId: 'something-else' } },
    ];
    a.onPermission = () => outcomes.shift()!;
    expect(await prompt(a, sessionId, 'ask 3')).toEqual({ stopReason: 'end_turn' });
    expect(answers(sessionId, a)).toEqual(['no', 'no', 'no']);
  });

  it('no answer within permission_timeout refuses', async () => {
    const { acp: a, sessionId } = await setup('raiders: { bjorn: {} }\npermission_timeout: 0.3\n');
    a.onPermission = () => new Promise(() => {});
    const t0 = Date.now();
    expect(await prompt(a, sessionId, 'ask 1')).toEqual({ stopReason: 'end_turn' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(answers(sessionId, a)).toEqual(['no']);
  });

  it('session/cancel while asking answers the question no and the prompt cancelled', async () => {
    const { acp: a, sessionId } = await setup();
    let asked!: () => void;
    const wasAsked = new Promise<void>((r) => (asked = r));
    a.onPermission = () => {
      asked();
      return new Promise(() => {});
    };
    const pending = prompt(a, sessionId, 'ask 1');
    await wasAsked;
    await a.conn.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await pending).toEqual({ stopReason: 'cancelled' });
  });

  it('a run without a registered handler gets no channel', async () => {
    const { hall } = await opened.start('raiders: { bjorn: {} }\n');
    const tap = await hall.events('raider.done');
    const reply = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1' });
    const done = await tap.waitFor((e) => e.id === reply.id);
    expect(JSON.parse(done.response)).toEqual(['no channel']);
  });
});
