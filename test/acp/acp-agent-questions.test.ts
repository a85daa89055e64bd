/**
 * An ACP agent's permission question behind the hall, answered by the
 * editor of the hall's ACP session (docs/agents.md, "Permission
 * questions"): the editor sees the hall's options, and its "Allow for this
 * session" reaches the agent as its own allow_always option. The agent is
 * test/fixtures/scripted-acp-agent.mjs.
 */
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { REPO } from '../support/hall-client.js';
import { acpScope, prompt, updatesOf } from './acp-support.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

const AGENT = path.join(REPO, 'test', 'fixtures', 'scripted-acp-agent.mjs');
const opened = acpScope();

describe("an ACP agent's question answered by the editor", () => {
  it("the editor's allow_always (Allow for this session) is the agent's allow_always", async () => {
    const { acp, sessionId } = await opened.session(`raiders: { scripted: { acp: { command: ${JSON.stringify(AGENT)} } } }\n`);
    acp.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'allow_always' } });
    expect(await prompt(acp, sessionId, 'ask allow_once,allow_always,reject_once')).toEqual({ stopReason: 'end_turn' });
    expect(acp.permissions).toHaveLength(1);
    expect(acp.permissions[0]?.options).toContainEqual({
      optionId: 'allow_always',
      name: 'Allow for this session: execute(rm -rf build)',
      kind: 'allow_always',
    });
    const texts = updatesOf(acp, sessionId)
      .filter((u) => u.sessionUpdate === 'agent_message_chunk')
      .map((u) => String(u.content.text));
    expect(texts.join('')).toContain('allowed always');
  });
});
