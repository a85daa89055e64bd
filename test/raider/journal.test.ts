// The journal module in-process (it is also the hall's API): ids, creation,
// references, the writer's numbering and repair, and the flock.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionInUseError, UsageError } from '../../src/raider/errors.js';
import { createSession, journalPath, lockPath, newSessionId, newestSessionId, sessionsDir } from '../../src/protocol/session-journal.js';
import { openJournalWriter, resolveSessionRef } from '../../src/raider/journal.js';
import { tryLockExclusive } from '../../src/raider/lock.js';
import { conversationFromJournal, parseJournal } from '../../src/raider/replay.js';
import { cleanUp, holdFlock, killAndWait, makeProject } from './helpers.js';

afterAll(cleanUp);

function lines(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('session ids', () => {
  it('are UTC YYYYMMDD-HHMMSS-xxxx', () => {
    expect(newSessionId(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)), '0a1b')).toBe('20260102-030405-0a1b');
    expect(newSessionId(new Date())).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/);
  });

  it('never build a path from a non-id', () => {
    expect(() => journalPath('/tmp', '../etc/passwd')).toThrow(/not a session id/);
  });
});

describe('createSession', () => {
  it('writes session.created as line 1, the sessions dir and .raider/.gitignore', () => {
    const root = makeProject();
    const s = createSession(root, { raiderVersion: '9.9.9', principal: 'tester' });
    expect(s.path).toBe(join(root, '.raider', 'sessions', `${s.id}.jsonl`));
    const [first, ...rest] = lines(s.path);
    expect(rest).toHaveLength(0);
    expect(first).toMatchObject({
      v: 1,
      seq: 1,
      type: 'session.created',
      id: s.id,
      scope: 'project',
      root,
      principal: 'tester',
      raider: '9.9.9',
    });
    expect(typeof first!.time).toBe('number');
    expect(readFileSync(join(root, '.raider', '.gitignore'), 'utf8')).toBe('sessions/\nlib/\n');
  });

  it('leaves an existing .raider/.gitignore alone', () => {
    const root = makeProject(undefined, { '.raider/.gitignore': 'mine\n' });
    createSession(root, { raiderVersion: '1' });
    expect(readFileSync(join(root, '.raider', '.gitignore'), 'utf8')).toBe('mine\n');
  });

  it('never reuses an existing file: a colliding id is drawn again', () => {
    const root = makeProject();
    const now = (): Date => new Date(Date.UTC(2026, 5, 1, 12, 0, 0));
    const first = createSession(root, { raiderVersion: '1', now, randomHex: () => 'aaaa' });
    const before = readFileSync(first.path, 'utf8');
    const draws = ['aaaa', 'aaaa', 'bbbb'];
    const second = createSession(root, { raiderVersion: '1', now, randomHex: () => draws.shift()! });
    expect(first.id).toBe('20260601-120000-aaaa');
    expect(second.id).toBe('20260601-120000-bbbb');
    expect(draws).toEqual([]);
    expect(readFileSync(first.path, 'utf8')).toBe(before);
  });
});

describe('resolveSessionRef', () => {
  const root = makeProject();
  mkdirSync(sessionsDir(root), { recursive: true });
  const ids = ['20260101-100000-aaaa', '20260101-100001-bbbb', '20260102-090000-aaab', '20260103-000000-1234'];
  for (const id of ids) writeFileSync(journalPath(root, id), '');

  it('accepts a full id, a unique prefix of 4+ characters, or the last 4 hex digits', () => {
    expect(resolveSessionRef(root, '20260101-100001-bbbb')).toBe('20260101-100001-bbbb');
    expect(resolveSessionRef(root, '20260102')).toBe('20260102-090000-aaab');
    expect(resolveSessionRef(root, 'bbbb')).toBe('20260101-100001-bbbb');
    expect(resolveSessionRef(root, '1234')).toBe('20260103-000000-1234');
  });

  it('names ambiguous candidates newest first, and unknown references', () => {
    expect(() => resolveSessionRef(root, '20260101-10')).toThrow(
      'session 20260101-10 is ambiguous: 20260101-100001-bbbb, 20260101-100000-aaaa',
    );
    expect(() => resolveSessionRef(root, 'cccc')).toThrow('unknown session cccc');
    expect(() => resolveSessionRef(root, 'aaa')).toThrow('unknown session aaa');
    expect(() => resolveSessionRef(root, '../x')).toThrow(UsageError);
  });

  it('finds the newest session', () => {
    expect(newestSessionId(root)).toBe('20260103-000000-1234');
    expect(newestSessionId(makeProject())).toBeUndefined();
  });
});

describe('the journal writer', () => {
  it('continues seq and run numbers from the file', async () => {
    const root = makeProject();
    const s = createSession(root, { raiderVersion: '1' });
    const w1 = await openJournalWriter(root, s.id);
    const r1 = w1.nextRun();
    w1.append('run.started', { engine: 'scripted' }, r1);
    w1.append('run.finished', { status: 'completed', elapsed: 0.1 }, r1);
    w1.close();
    const w2 = await openJournalWriter(root, s.id);
    const r2 = w2.nextRun();
    w2.append('run.started', { engine: 'scripted', seq: 999, type: 'evil' }, r2);
    w2.close();
    const all = lines(s.path);
    expect(all.map((l) => [l.seq, l.type, l.run])).toEqual([
      [1, 'session.created', undefined],
      [2, 'run.started', 'r1'],
      [3, 'run.finished', 'r1'],
      [4, 'run.started', 'r2'],
    ]);
    expect(Object.keys(all[3]!)).toEqual(Object.keys(all[3]!).sort());
  });

  it('starts a fresh line after a torn last line, which replay reports as damaged', async () => {
    const root = makeProject();
    const s = createSession(root, { raiderVersion: '1' });
    appendFileSync(s.path, '{"v":1,"seq":2,"type":"mess');
    const w = await openJournalWriter(root, s.id);
    w.append('message', { role: 'user', content: 'after the tear' }, w.nextRun());
    w.close();
    const text = readFileSync(s.path, 'utf8');
    const { records, damaged } = parseJournal(text);
    expect(damaged).toEqual([2]);
    expect(records.at(-1)).toMatchObject({ seq: 2, type: 'message', content: 'after the tear', run: 'r1' });
  });

  it('rebuilds the conversation from answered runs only', () => {
    const recs = parseJournal(
      [
        { type: 'session.created' },
        { type: 'message', run: 'r1', role: 'user', content: 'q1' },
        { type: 'message', run: 'r1', role: 'assistant', content: 'a1' },
        { type: 'message', run: 'r2', role: 'user', content: 'failed q' },
        { type: 'message', role: 'user', content: 'forked' },
        { type: 'message', run: 'r3', role: 'user', content: 'q3' },
        { type: 'message', run: 'r3', role: 'assistant', content: 'a3' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    ).records;
    expect(conversationFromJournal(recs).map((m) => ('content' in m ? m.content : ''))).toEqual(['q1', 'a1', 'forked', 'q3', 'a3']);
    expect(conversationFromJournal([...recs, { type: 'history.cleared' }])).toEqual([]);
  });
});

describe('the single-writer lock is a real flock', () => {
  it('is refused at once while flock(1) holds it, and free again when the holder dies', async () => {
    const root = makeProject();
    const s = createSession(root, { raiderVersion: '1' });
    const holder = await holdFlock(lockPath(root, s.id), 'flock');
    await expect(openJournalWriter(root, s.id)).rejects.toThrow(SessionInUseError);
    await killAndWait(holder); // SIGKILL: only the kernel can release it now
    const w = await openJournalWriter(root, s.id);
    w.close();
  });

  it('interoperates with perl flock(), as the Perl raider takes it', async () => {
    const root = makeProject();
    const s = createSession(root, { raiderVersion: '1' });
    const holder = await holdFlock(lockPath(root, s.id), 'perl');
    await expect(openJournalWriter(root, s.id)).rejects.toThrow(`session ${s.id} is in use by another raider`);
    await killAndWait(holder);
    const w = await openJournalWriter(root, s.id);
    // While we hold it, another open description (another writer) is refused...
    expect(await tryLockExclusive(lockPath(root, s.id))).toBeUndefined();
    w.close();
    // ...and release hands it on; the lock file itself stays.
    const again = await tryLockExclusive(lockPath(root, s.id));
    expect(again).toBeDefined();
    again!.release();
    expect(existsSync(lockPath(root, s.id))).toBe(true);
  });
});

describe('each lock helper takes the same kernel lock', () => {
  for (const helper of ['flock', 'perl'] as const) {
    it(`${helper}: exclusive against flock(1) and the other helper, released on close`, async () => {
      const file = join(makeProject(), 'x.lock');
      const held = await tryLockExclusive(file, { helper });
      expect(held).toBeDefined();
      expect(spawnSync('flock', ['--nonblock', file, 'true']).status).toBe(1);
      expect(await tryLockExclusive(file, { helper: helper === 'flock' ? 'perl' : 'flock' })).toBeUndefined();
      held!.release();
      expect(spawnSync('flock', ['--nonblock', file, 'true']).status).toBe(0);
    });
  }
});
