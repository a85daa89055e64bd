// Sessions through the real raider: journal lines of a run, continuation
// with --session/--continue, and the single-writer lock (exit 4).
import { readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockPath } from '../../src/protocol/session-journal.js';
import {
  cleanUp,
  ensureBuilt,
  holdFlock,
  killAndWait,
  makeProject,
  parseEvents,
  runRaider,
  startRaider,
  waitForOutput,
} from './helpers.js';

beforeAll(ensureBuilt, 120_000);
afterAll(cleanUp);

const SCRIPT = `
replies:
  - match: "wait"
    steps:
      - sleep: 60
      - message: "late"
  - steps:
      - tool: list_dir
      - tool: read_file
        arguments: { path: "notes.txt" }
      - message: "turn {{turn}}: {{mission}}"
`;

function journal(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function firstRun(root: string): Promise<{ id: string; path: string }> {
  const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', root, '--', 'first mission']);
  expect(r.code).toBe(0);
  return parseEvents(r.stdout).at(-1)!.session as { id: string; path: string };
}

/** The journal records of one run of SCRIPT: its mission, two tool calls, and its answer. */
const RUN_RECORDS = ['run.started', 'message', 'tool.call', 'tool.result', 'tool.call', 'tool.result', 'message', 'run.finished'];

describe('the journal of a run', () => {
  it('records the run as docs/raider.md (Sessions) says, with the full tool results', async () => {
    const root = makeProject(SCRIPT, { 'notes.txt': 'n'.repeat(1200) });
    const s = await firstRun(root);
    const recs = journal(s.path);
    expect(recs.map((r) => r.type)).toEqual(['session.created', ...RUN_RECORDS]);
    expect(recs.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const r of recs) expect(r.v).toBe(1);
    expect(recs[0]).toMatchObject({ id: s.id, scope: 'project', root });
    expect(recs[0]).not.toHaveProperty('run');
    for (const r of recs.slice(1)) expect(r.run).toBe('r1');
    expect(recs[2]).toMatchObject({ role: 'user', content: 'first mission' });
    expect(recs[6]).toMatchObject({ call: 'c2', name: 'read_file', status: 'succeeded', ok: true, size: 1200, content: 'n'.repeat(1200) });
    expect(recs[7]).toMatchObject({ role: 'assistant', content: 'turn 1: first mission' });
    expect(recs[8]).toMatchObject({ status: 'completed', metrics: { tool_calls: 2 } });
    expect(recs[8]).not.toHaveProperty('response');
  });

  it('writes nothing with --no-session', async () => {
    const root = makeProject(SCRIPT, { 'notes.txt': 'x' });
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', root, '--no-session', '--', 'm']);
    expect(r.code).toBe(0);
    expect(parseEvents(r.stdout).at(-1)).not.toHaveProperty('session');
    expect(spawnSync('ls', ['-A', `${root}/.raider`]).stdout.toString()).toBe('script.yml\n');
  });
});

describe('continuing a session', () => {
  it('--session ID continues numbering and resumes the conversation', async () => {
    const root = makeProject(SCRIPT, { 'notes.txt': 'x' });
    const s = await firstRun(root);
    const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', root, '--session', s.id.slice(-4), '--', 'second mission']);
    expect(r.code).toBe(0);
    const events = parseEvents(r.stdout);
    // The stream starts at seq 1 again; the journal does not.
    expect(events[0]).toMatchObject({ seq: 1, type: 'run.started' });
    expect(events.at(-1)).toMatchObject({ response: 'turn 2: second mission', session: s });
    const recs = journal(s.path);
    expect(recs.filter((x) => x.type === 'session.created')).toHaveLength(1);
    expect(recs.map((x) => x.seq)).toEqual(recs.map((_, i) => i + 1));
    expect(recs.slice(9).every((x) => x.run === 'r2')).toBe(true);
    expect(recs.slice(9).map((x) => x.type)).toEqual(RUN_RECORDS);
    // Call ids restart per run.
    expect(recs[11]).toMatchObject({ type: 'tool.call', call: 'c1', run: 'r2' });
  });

  it('--continue takes the newest session', async () => {
    const root = makeProject(SCRIPT, { 'notes.txt': 'x' });
    const older = await firstRun(root);
    // Ids carry the time to the second: rather than wait a second, date the first session back a year.
    renameSync(older.path, path.join(path.dirname(older.path), '20250101-000000-0000.jsonl'));
    const newest = await firstRun(root);
    expect(newest.id > '20250101-000000-0000').toBe(true);
    const r = await runRaider(['--json', '-e', 'scripted', '-r', root, '--continue', '--', 'again']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ session: newest, response: 'turn 2: again' });
  });
});

describe('the single-writer lock', () => {
  it('held by another process: exit 4, the message on stderr, nothing on stdout, journal untouched', async () => {
    const root = makeProject(SCRIPT, { 'notes.txt': 'x' });
    const s = await firstRun(root);
    const before = readFileSync(s.path, 'utf8');
    const holder = await holdFlock(lockPath(root, s.id), 'perl');
    try {
      const r = await runRaider(['--stream-json', '-e', 'scripted', '-r', root, '--session', s.id, '--', 'blocked']);
      expect(r.code).toBe(4);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim()).toBe(`session ${s.id} is in use by another raider`);
      expect(readFileSync(s.path, 'utf8')).toBe(before);
    } finally {
      await killAndWait(holder);
    }
  });

  it('is held by a running raider, refuses a second one, and dies with it', async () => {
    const root = makeProject(SCRIPT, { 'notes.txt': 'x' });
    const s = await firstRun(root);
    const lock = lockPath(root, s.id);
    const { child, done } = startRaider(['--stream-json', '-e', 'scripted', '-r', root, '--session', s.id, '--', 'wait here']);
    await waitForOutput(child, '"state":"running"');
    // flock(1) sees the raider's lock...
    expect(spawnSync('flock', ['--nonblock', lock, 'true']).status).toBe(1);
    // ...so does a second raider...
    const second = await runRaider(['--stream-json', '-e', 'scripted', '-r', root, '--continue', '--', 'me too']);
    expect(second).toMatchObject({ code: 4, stdout: '' });
    // ...and SIGKILL, which leaves no chance to clean up, still frees it.
    child.kill('SIGKILL');
    await done;
    expect(spawnSync('flock', ['--nonblock', lock, 'true']).status).toBe(0);
  });
});
