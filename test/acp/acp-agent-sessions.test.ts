/**
 * An editor's ACP session with the hall is a binding: its prompts continue
 * one session of the ACP agent behind the hall (docs/agents.md, "Sessions
 * across runs"). The agent is test/fixtures/scripted-acp-agent.mjs, its
 * sessions kept in a directory so its next process can resume one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { REPO } from '../support/hall-client.js';
import { acpScope, prompt, updatesOf } from './acp-support.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

const AGENT = path.join(REPO, 'test', 'fixtures', 'scripted-acp-agent.mjs');
const opened = acpScope();
const sessions = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-agent-sessions-'));
afterAll(() => fs.rmSync(sessions, { recursive: true, force: true }));

describe("an editor's session on an ACP agent", () => {
  it("the editor's second prompt goes on in the agent session of its first", async () => {
    const config =
      `raiders: { scripted: { acp: { command: ${JSON.stringify(AGENT)}, ` +
      `env: { SCRIPTED_ACP_SESSIONS: ${JSON.stringify(sessions)}, SCRIPTED_ACP_CONTINUE: resume } } } }\n`;
    const { acp, sessionId } = await opened.session(config);
    expect(await prompt(acp, sessionId, 'answer one')).toEqual({ stopReason: 'end_turn' });
    expect(await prompt(acp, sessionId, 'recall')).toEqual({ stopReason: 'end_turn' });
    const texts = updatesOf(acp, sessionId)
      .filter((u) => u.sessionUpdate === 'agent_message_chunk')
      .map((u) => String(u.content.text));
    expect(texts.join('')).toContain('earlier: answer one');
  });
});
