/**
 * An editor's session mode reaches the ACP agent behind the hall: the mode the
 * editor sets on its session with the hall's ACP face is the mission's
 * permission mode, and the ACP bridge sets it on the agent's own session
 * (docs/agents.md, "Mode and model"). The agent is test/fixtures/scripted-acp-agent.mjs.
 */
import path from 'node:path';
import { methods } from '@agentclientprotocol/sdk';
import { describe, expect, it, vi } from 'vitest';
import { REPO } from '../support/hall-client.js';
import { acpScope, prompt, updatesOf } from './acp-support.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

const AGENT = path.join(REPO, 'test', 'fixtures', 'scripted-acp-agent.mjs');
const opened = acpScope();

describe("an editor's session mode on an ACP agent", () => {
  it('the mode the editor sets is the mode the agent session gets', async () => {
    const { acp, sessionId } = await opened.session(`raiders: { scripted: { acp: { command: ${JSON.stringify(AGENT)} } } }\n`);
    expect(await acp.conn.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'plan' })).toEqual({});
    expect(await prompt(acp, sessionId, 'settings')).toEqual({ stopReason: 'end_turn' });
    const texts = updatesOf(acp, sessionId)
      .filter((u) => u.sessionUpdate === 'agent_message_chunk')
      .map((u) => String(u.content.text));
    expect(texts.join('')).toContain('mode=plan model=m1');
  });
});
