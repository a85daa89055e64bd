import { describe, expect, it } from 'vitest';
import { acpScope, initialize, newSession, prompt, updatesOf } from './acp-support.js';

const opened = acpScope();

describe('ACP over TCP', () => {
  it('initializes, opens a session and answers a prompt with streamed updates then end_turn', async () => {
    const { hall, port } = await opened.start('raiders: { bjorn: {}, lagertha: {} }\n');
    const acp = await opened.connect(port);
    const init = await initialize(acp);
    expect(init).toMatchObject({
      protocolVersion: 1,
      agentCapabilities: { loadSession: true, promptCapabilities: { image: false, audio: false, embeddedContext: false } },
      agentInfo: { name: 'raider-hall' },
    });
    const sessionId = await newSession(acp, hall.root);
    expect(sessionId).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/);
    const result = await prompt(acp, sessionId, 'answer hello there');
    expect(result).toEqual({ stopReason: 'end_turn' });
    expect(updatesOf(acp, sessionId)).toEqual([{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hello there' } }]);
    const second = await prompt(acp, sessionId, 'argv');
    expect(second).toEqual({ stopReason: 'end_turn' });
    const argvText = updatesOf(acp, sessionId).at(-1)!.content.text as string;
    const argv = JSON.parse(argvText).argv as string[];
    expect(argv).toContain('--session');
    expect(argv[argv.indexOf('--session') + 1]).toBe(sessionId);
  });

  it('a failed run is a JSON-RPC error -32000 whose text never appears as a chunk', async () => {
    const { acp, sessionId } = await opened.session('raiders: { bjorn: {} }\n');
    await expect(prompt(acp, sessionId, 'fail the engine broke')).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining('the engine broke'),
    });
    expect(JSON.stringify(updatesOf(acp, sessionId))).not.toContain('the engine broke');
  });

  it('unknown raider names, sessions and methods get -32602 / -32601', async () => {
    const { hall, port } = await opened.start('raiders: { bjorn: {} }\n');
    const acp = await opened.connect(port);
    await initialize(acp);
    await expect(newSession(acp, hall.root, 'nobody')).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('bjorn') });
    await expect(prompt(acp, 'nope', 'x')).rejects.toMatchObject({ code: -32602 });
    await expect(acp.conn.agent.request('session/frobnicate', {})).rejects.toMatchObject({ code: -32601 });
  });
});

describe('following a run that writes an overlong line', () => {
  // A raider writing 3 MB without a newline must not grow the hall's memory:
  // the line is skipped and reported, and the events after it still stream.
  it('skips the line, says so in the hall log, and streams the events after it', async () => {
    const { hall, acp, sessionId } = await opened.session('raiders: { bjorn: {} }\n');
    expect(await prompt(acp, sessionId, 'long 3')).toEqual({ stopReason: 'end_turn' });
    expect(updatesOf(acp, sessionId)).toEqual([
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'wrote one line of 3 MB' } },
    ]);
    const skipped = hall.logs.filter((line) => line.includes('a line of its events was skipped'));
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatch(/line too long: a line may hold at most 1048576 bytes/);
  });
});
