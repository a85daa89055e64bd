/**
 * ACP tells why a run failed and which tool answered (issue 14, item 18): a
 * raider that exits without a result (no engine configured) fails the prompt
 * with what it said, not only "ended without a result (exit code 3)"; a tool
 * result names its tool, in the updates and in the terminal client.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempRoot } from '../support/hall-client.js';
import { acpScope, prompt, updatesOf } from './acp-support.js';

const opened = acpScope();

describe('ACP: why a run failed', () => {
  it("a raider with no engine: the prompt's error says so, and how the run ended", async () => {
    // The real raider, with nothing in the environment that would choose an engine.
    const { acp, sessionId } = await opened.session('raiders: { bjorn: {} }\n', {
      RAIDER_HALL_RAIDER_BIN: path.resolve('bin/raider'),
      OPENAI_API_KEY: undefined,
      ANTHROPIC_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
      ANTHROPIC_BASE_URL: undefined,
      HOME: tempRoot('acp-home-'),
    });
    const failure = await prompt(acp, sessionId, 'hello').then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toMatchObject({ code: -32000, message: expect.stringMatching(/^raider run failed: no engine configured/) });
    expect(failure).toMatchObject({ message: expect.stringMatching(/\(raider bjorn-\S+ ended without a result \(exit code 3\)\)$/) });
    // The run id prefix of the slot log is not part of what the raider said.
    expect(failure).toMatchObject({ message: expect.not.stringContaining('[bjorn-') });
  });
});

describe('ACP: tool results', () => {
  it('name their tool: as the call was shown, or by the tool name when it was not', async () => {
    const { acp, sessionId } = await opened.session('raiders: { bjorn: {} }\n');
    expect(await prompt(acp, sessionId, 'tool echo hi')).toEqual({ stopReason: 'end_turn' });
    expect(await prompt(acp, sessionId, 'tool-result-only')).toEqual({ stopReason: 'end_turn' });
    const results = updatesOf(acp, sessionId).filter((u) => u.sessionUpdate === 'tool_call_update');
    expect(results).toEqual([
      expect.objectContaining({ title: 'bash: echo hi', status: 'completed' }),
      expect.objectContaining({ title: 'list_dir', status: 'failed' }),
    ]);
  });

  it('the terminal client prints the tool of each result', async () => {
    const { port } = await opened.start('raiders: { bjorn: {} }\n');
    const res = await runCli(['acp', '--port', String(port)], { input: 'tool echo hi\n' });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('→ bash: echo hi');
    expect(res.stdout).toContain('← bash: echo hi completed');
  });
});
