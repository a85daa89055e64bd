/**
 * An editor on the hall's ACP face, with an ACP agent behind the hall
 * (docs/agents.md): the mode the editor sets on its session is the mode of
 * the agent's session ("Mode and model"); the editor's session is a binding
 * whose prompts continue one session of the agent ("Sessions across runs");
 * the agent's permission questions are the editor's to answer, "Allow for
 * this session" included ("Permission questions"). The agent is
 * test/fixtures/scripted-acp-agent.mjs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { methods } from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { eventually, type Json, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { type AcpTestClient, acpScope, prompt, updatesOf } from './acp-support.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

const opened = acpScope();
const sessions = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-agent-sessions-'));
afterAll(() => fs.rmSync(sessions, { recursive: true, force: true }));

function agentConfig(env = ''): string {
  return `raiders: { scripted: { acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}${env !== '' ? `, env: { ${env} }` : ''} } } }\n`;
}

/** What the agent said in the session, its chunks joined. */
function agentText(acp: AcpTestClient, sessionId: string): string {
  return updatesOf(acp, sessionId)
    .filter((u) => u.sessionUpdate === 'agent_message_chunk')
    .map((u) => String(u.content.text))
    .join('');
}

/**
 * A tool call as the editor shows it after these parts of it, in order: each
 * field given replaces the one before, as ACP says of a ToolCallUpdate.
 */
function shownCall(parts: readonly Json[]): Json {
  const call: Json = {};
  for (const part of parts)
    for (const [key, value] of Object.entries(part))
      if (key !== 'sessionUpdate' && value !== undefined && value !== null) call[key] = value;
  return call;
}

describe('an editor with an ACP agent behind the hall', () => {
  it("the agent's text reaches the editor as it streams: the first chunk before the turn ends, the answer once", async () => {
    const { acp, sessionId } = await opened.session(agentConfig());
    const go = path.join(sessions, 'partial-go-on');
    let ended = false;
    const turn = prompt(acp, sessionId, `partial first words ${go}`).finally(() => {
      ended = true;
    });
    // The agent said its first chunk and waits for the file: the turn goes on, the editor has the chunk already.
    await eventually(() => expect(agentText(acp, sessionId)).toBe('first words'), 30_000, 20);
    expect(ended).toBe(false);
    fs.writeFileSync(go, '');
    expect(await turn).toEqual({ stopReason: 'end_turn' });
    // The final message repeats the chunks: not sent again.
    expect(agentText(acp, sessionId)).toBe('first words, then the rest');
  });

  it("the agent's thought, plan and usage reach the editor as ACP updates; the thought is not the answer", async () => {
    const { acp, sessionId } = await opened.session(agentConfig());
    expect(await prompt(acp, sessionId, 'report')).toEqual({ stopReason: 'end_turn' });
    const updates = updatesOf(acp, sessionId).filter((u) => u.sessionUpdate !== 'agent_message_chunk');
    expect(updates).toEqual([
      { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'thinking it over' } },
      {
        sessionUpdate: 'plan',
        entries: [
          { content: 'read the code', priority: 'high', status: 'completed' },
          { content: 'write the fix', priority: 'medium', status: 'in_progress' },
        ],
      },
      { sessionUpdate: 'usage_update', used: 1200, size: 200000, cost: { amount: 0.25, currency: 'USD' } },
      { sessionUpdate: 'usage_update', used: 1500, size: 200000 },
    ]);
    expect(agentText(acp, sessionId)).toBe('reported');
  });

  it('the mode the editor sets is the mode the agent session gets', async () => {
    const { acp, sessionId } = await opened.session(agentConfig());
    expect(await acp.conn.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'plan' })).toEqual({});
    expect(await prompt(acp, sessionId, 'settings')).toEqual({ stopReason: 'end_turn' });
    expect(agentText(acp, sessionId)).toContain('mode=plan model=m1');
  });

  it("the editor's second prompt goes on in the agent session of its first", async () => {
    const env = `SCRIPTED_ACP_SESSIONS: ${JSON.stringify(sessions)}, SCRIPTED_ACP_CONTINUE: resume`;
    const { acp, sessionId } = await opened.session(agentConfig(env));
    expect(await prompt(acp, sessionId, 'answer one')).toEqual({ stopReason: 'end_turn' });
    expect(await prompt(acp, sessionId, 'recall')).toEqual({ stopReason: 'end_turn' });
    expect(agentText(acp, sessionId)).toContain('earlier: answer one');
  });

  it("the editor's allow_always (Allow for this session) is the agent's allow_always", async () => {
    const { acp, sessionId } = await opened.session(agentConfig());
    acp.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'allow_always' } });
    expect(await prompt(acp, sessionId, 'ask allow_once,allow_always,reject_once')).toEqual({ stopReason: 'end_turn' });
    expect(acp.permissions).toHaveLength(1);
    expect(acp.permissions[0]?.options).toContainEqual({
      optionId: 'allow_always',
      name: 'Allow for this session: execute(rm -rf build)',
      kind: 'allow_always',
    });
    // The call the agent showed is made once: the question only marks it pending, under the agent's title.
    const askedAbout = acp.permissions[0]?.toolCall;
    expect(askedAbout).toMatchObject({ title: 'rm -rf build', status: 'pending' });
    const made = updatesOf(acp, sessionId).filter((u) => u.sessionUpdate === 'tool_call' && u.toolCallId === askedAbout?.toolCallId);
    expect(made).toEqual([expect.objectContaining({ title: 'rm -rf build', kind: 'execute' })]);
    expect(agentText(acp, sessionId)).toContain('allowed always');
  });

  it("the agent's tool call reaches the editor as the agent gave it: its title and kind, its diff a diff, its locations", async () => {
    const { acp, sessionId } = await opened.session(agentConfig());
    const file = path.join(sessions, 'notes.txt');
    expect(await prompt(acp, sessionId, `edit ${file}`)).toEqual({ stopReason: 'end_turn' });
    const diff = { type: 'diff', path: file, oldText: 'one\ntwo\n', newText: 'one\n2\n' };
    const updates = updatesOf(acp, sessionId);
    const call = updates.find((u) => u.sessionUpdate === 'tool_call');
    expect(call).toMatchObject({
      title: `Edit ${file}`,
      kind: 'edit',
      rawInput: { file_path: file },
      locations: [{ path: file, line: 3 }],
      content: [diff],
    });
    const result = updates.find(
      (u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === call?.toolCallId && u.status === 'completed',
    );
    expect(result).toMatchObject({
      title: `Edit ${file}`,
      content: [{ type: 'content', content: { type: 'text', text: 'changed 1 line' } }, diff],
    });
    expect(agentText(acp, sessionId)).toContain('edited');
  });

  it('a permission question about a call with a diff keeps the diff: the editor is asked with the diff still shown', async () => {
    const { acp, sessionId } = await opened.session(agentConfig());
    const file = path.join(sessions, 'asked.txt');
    const diff = { type: 'diff', path: file, oldText: 'one\ntwo\n', newText: 'one\n2\n' };
    let shownWhenAsked: unknown[] = [];
    acp.onPermission = (params) => {
      // What the editor has been told of the call up to the question, the question's own tool call last.
      const id = params.toolCall.toolCallId;
      shownWhenAsked = [...updatesOf(acp, sessionId).filter((u) => 'toolCallId' in u && u.toolCallId === id), params.toolCall];
      return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
    };
    expect(await prompt(acp, sessionId, `askedit ${file}`)).toEqual({ stopReason: 'end_turn' });
    expect(shownWhenAsked[0]).toMatchObject({
      sessionUpdate: 'tool_call',
      kind: 'edit',
      content: [diff],
      locations: [{ path: file, line: 3 }],
    });
    // Nothing after it replaced the diff with text: the question marks the call pending, with no content of its own.
    for (const later of shownWhenAsked.slice(1)) expect(later).not.toHaveProperty('content');
    expect(shownWhenAsked.at(-1)).toMatchObject({ title: `Edit ${file}`, status: 'pending' });
    expect(agentText(acp, sessionId)).toContain('edited');
  });

  it("a question that names the agent's call by its id alone leaves the call as the agent showed it: title, kind, input, diff", async () => {
    const { acp, sessionId } = await opened.session(agentConfig());
    const file = path.join(sessions, 'bare.txt');
    let shownWhenAsked: Json[] = [];
    acp.onPermission = (params) => {
      const id = params.toolCall.toolCallId;
      shownWhenAsked = [...updatesOf(acp, sessionId).filter((u) => u.toolCallId === id), params.toolCall];
      return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
    };
    expect(await prompt(acp, sessionId, `askbare ${file}`)).toEqual({ stopReason: 'end_turn' });
    const diff = { type: 'diff', path: file, oldText: 'one\ntwo\n', newText: 'one\n2\n' };
    const agentGave = { title: `Edit ${file}`, kind: 'edit', rawInput: { file_path: file }, locations: [{ path: file, line: 3 }] };
    expect(shownCall(shownWhenAsked)).toEqual({
      toolCallId: shownWhenAsked[0]?.toolCallId,
      ...agentGave,
      content: [diff],
      status: 'pending',
    });
    // The question itself names the call as the editor shows it, for a client that draws the question from it alone.
    expect(shownWhenAsked.at(-1)).toMatchObject({ title: `Edit ${file}`, status: 'pending' });
    const all = updatesOf(acp, sessionId).filter((u) => u.toolCallId === shownWhenAsked[0]?.toolCallId);
    expect(shownCall(all)).toMatchObject({ ...agentGave, status: 'completed' });
    expect(agentText(acp, sessionId)).toContain('edited');
  });
});
