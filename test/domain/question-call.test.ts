/** questionCall: the tool call a permission question shows an ACP client, and how the question names it (docs/agents.md, "Permission questions"). */
import { describe, expect, it } from 'vitest';
import { type AnnouncedCalls, permissionToolCall, questionCall } from '../../src/domain/acp-mapping.js';

const question = {
  id: 'q1',
  call: 'e1',
  tool: 'e1',
  title: 'e1',
  kind: 'other',
  input: {},
  reason: 'the agent asks before this tool call',
};

describe('questionCall', () => {
  it('a call the client was not shown is made from the question, and remembered', () => {
    const announced: AnnouncedCalls = new Map();
    const call = permissionToolCall('run-1', question);
    const { shown, asked } = questionCall(call, announced);
    expect(shown).toEqual(call);
    expect(asked).not.toHaveProperty('sessionUpdate');
    expect(asked).toMatchObject({ toolCallId: call.toolCallId, title: 'e1', status: 'pending' });
    expect(announced.get(call.toolCallId)).toEqual({ title: 'e1', agentContent: false });
  });

  it('a call the client was shown keeps its title: the update marks it pending, the question names it by what it shows', () => {
    const call = permissionToolCall('run-1', question);
    const announced: AnnouncedCalls = new Map([[call.toolCallId, { title: 'Edit /x', agentContent: false }]]);
    const { shown, asked } = questionCall(call, announced);
    expect(shown).toEqual({ sessionUpdate: 'tool_call_update', toolCallId: call.toolCallId, status: 'pending', content: call.content });
    expect(asked).toEqual({ toolCallId: call.toolCallId, status: 'pending', content: call.content, title: 'Edit /x' });
    expect(shown).not.toHaveProperty('kind');
    expect(shown).not.toHaveProperty('rawInput');
  });

  it("a shown call with its agent's own content (a diff) keeps it: the question's text does not replace it", () => {
    const call = permissionToolCall('run-1', question);
    const announced: AnnouncedCalls = new Map([[call.toolCallId, { title: 'Edit /x', agentContent: true }]]);
    const { shown, asked } = questionCall(call, announced);
    expect(shown).not.toHaveProperty('content');
    expect(asked).toEqual({ toolCallId: call.toolCallId, status: 'pending', title: 'Edit /x' });
  });
});
