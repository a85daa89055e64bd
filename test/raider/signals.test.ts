// Signals during a run: SIGINT cancels, SIGTERM
// interrupts, the document is written first, then the raider dies by the
// same signal. A sleeping script step must give way at once.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp, ensureBuilt, makeProject, parseEvents, startRaider, waitForOutput, eventTypes, runTypes } from './helpers.js';

beforeAll(ensureBuilt, 120_000);
afterAll(cleanUp);

const SLOW = `
replies:
  - match: "tool first"
    steps:
      - tool: list_dir
      - sleep: 60
      - message: "too late"
  - steps:
      - sleep: 60
      - message: "too late"
`;

/** Resolves once some journal under root contains `needle`. */
async function waitForJournal(root: string, needle: string): Promise<void> {
  const dir = join(root, '.raider', 'sessions');
  for (let i = 0; i < 200; i++) {
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.jsonl')) : [];
    if (files.some((f) => readFileSync(join(dir, f), 'utf8').includes(needle))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no journal in ${dir} shows ${needle}`);
}

describe('SIGINT during a sleep step', () => {
  it('ends the run cancelled at once and dies by SIGINT', async () => {
    const { child, done } = startRaider(['--stream-json', '-e', 'scripted', '-r', makeProject(SLOW), '--', 'wait']);
    await waitForOutput(child, '"state":"running"');
    const sent = Date.now();
    child.kill('SIGINT');
    const r = await done;
    expect(Date.now() - sent).toBeLessThan(5000); // the 60 s sleep was cut short
    expect(r.signal).toBe('SIGINT');
    expect(r.code).toBeNull();
    expect(eventTypes(parseEvents(r.stdout))).toEqual(runTypes('cancelled'));
    const finished = parseEvents(r.stdout).at(-1)!;
    expect(finished).toMatchObject({ status: 'cancelled', seq: 4 });
    for (const absent of ['response', 'metrics', 'signal', 'error']) expect(finished).not.toHaveProperty(absent);
    // The journal records the cancelled run too.
    const journal = readFileSync((finished.session as { path: string }).path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(journal.map((j) => j.type)).toEqual(['session.created', 'run.started', 'message', 'run.finished']);
    expect(journal.at(-1)).toMatchObject({ status: 'cancelled', run: 'r1' });
  });

  it('keeps the tool events that came before the cancel', async () => {
    const { child, done } = startRaider(['--stream-json', '-e', 'scripted', '-r', makeProject(SLOW), '--no-session', '--', 'tool first']);
    await waitForOutput(child, '"type":"tool.result"');
    child.kill('SIGINT');
    const r = await done;
    expect(r.signal).toBe('SIGINT');
    expect(eventTypes(parseEvents(r.stdout))).toEqual(runTypes('cancelled', 'tool.call', 'tool.result'));
  });

  it('with --json still writes the document before dying', async () => {
    const root = makeProject(SLOW);
    const { child, done } = startRaider(['--json', '-e', 'scripted', '-r', root, '--', 'wait']);
    // --json prints nothing until the end: watch the journal for the run instead.
    await waitForJournal(root, '"type":"run.started"');
    child.kill('SIGINT');
    const r = await done;
    expect(r.signal).toBe('SIGINT');
    expect(JSON.parse(r.stdout)).toMatchObject({ version: 1, status: 'cancelled' });
  });
});

describe('SIGTERM during a run', () => {
  it('ends the run interrupted with signal TERM and dies by SIGTERM', async () => {
    const { child, done } = startRaider(['--stream-json', '-e', 'scripted', '-r', makeProject(SLOW), '--', 'wait']);
    await waitForOutput(child, '"state":"running"');
    child.kill('SIGTERM');
    const r = await done;
    expect(r.signal).toBe('SIGTERM');
    expect(eventTypes(parseEvents(r.stdout))).toEqual(runTypes('interrupted'));
    const finished = parseEvents(r.stdout).at(-1)!;
    expect(finished).toMatchObject({ status: 'interrupted', signal: 'TERM' });
    const journal = readFileSync((finished.session as { path: string }).path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(journal.at(-1)).toMatchObject({ type: 'run.finished', status: 'interrupted', signal: 'TERM' });
  });
});
