// This raider under a real hall: the hall runs the real bin/raider (not
// the fake one) with `engine: openai` pointed at a fake chat-completions
// server; the model asks for hall_status, the raider asks the hall over its
// control socket, and the answer (and the tokens it used) arrives in raider.done.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestHall, type TestHall } from '../support/test-hall.js';
import { startFakeLlm, type FakeLlm } from './fake-llm.js';
import { ensureBuilt } from './helpers.js';

beforeAll(ensureBuilt, 120_000);

let hall: TestHall | undefined;
let llm: FakeLlm | undefined;
afterEach(async () => {
  await hall?.stop();
  await llm?.close();
  hall = undefined;
  llm = undefined;
});
afterAll(async () => {
  await hall?.stop();
});

describe('the built-in raider under the hall', () => {
  it('runs engine: openai against the fake server; its answer is in raider.done', async () => {
    llm = await startFakeLlm('openai', [
      { text: 'Checking the hall.', tools: [{ name: 'hall_status', arguments: {} }] },
      { text: 'The hall is up and I am its only run.' },
    ]);
    hall = await startTestHall({
      config: 'raiders:\n  oracle: { engine: openai, model: local-model }\n',
      env: { RAIDER_HALL_RAIDER_BIN: undefined, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'x', ANTHROPIC_API_KEY: undefined },
    });
    const tap = await hall.events('raider.');
    const reply = await hall.request({ cmd: 'spawn', name: 'oracle', mission: 'is the hall up?' });
    expect(reply.id).toMatch(/^oracle-\d+$/);
    const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === reply.id, 60_000);
    tap.close();
    expect(done).toMatchObject({ status: 'completed', response: 'The hall is up and I am its only run.', exit_code: 0, signaled: 0 });
    // What its two model calls used, as the model's API said it: in raider.done, as an ACP agent's usage is.
    expect(done.usage).toEqual({ input_tokens: 20, output_tokens: 10, total_tokens: 30 });

    // The model was offered the hall tools, and got the hall's own status back.
    const first = llm.requests[0]!.body;
    expect(first.model).toBe('local-model');
    const offered = (first.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(['hall_status', 'hall_spawn', 'telegram_reply', 'bash']));
    const toolMessage = (llm.requests[1]!.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'tool')!;
    expect(JSON.parse(toolMessage.content)).toMatchObject({ running: 1, root: hall.root });
  }, 90_000);
});
