/**
 * A worktree raider's runs (docs/worktrees.md) through a real hall, real git
 * and the fake raider: each run works in a git worktree of its own on the
 * branch `raider/RUN_ID`, and the root's checkout is never touched.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, type Json, RAIDER_BIN, startTestHall, type TestHall, tempRoot } from '../support/test-hall.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

const IDENTITY = ['-c', 'user.name=Test', '-c', 'user.email=test@example.com'];

function git(cwd: string, ...args: string[]): string {
  // --no-optional-locks: looking must not refresh the root's index, which the test compares byte for byte.
  return execFileSync('git', ['--no-optional-locks', '-C', cwd, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function gitOk(cwd: string, ...args: string[]): boolean {
  try {
    git(cwd, ...args);
    return true;
  } catch {
    return false;
  }
}

/** A repository with one commit: README.md, same.txt, and a .gitignore for the hall's own files, as a project has. */
function repoRoot(ignore = '.raider-hall*\n.raider/\n'): string {
  const root = tempRoot();
  git(root, 'init', '--quiet', '--initial-branch=trunk');
  fs.writeFileSync(path.join(root, '.gitignore'), ignore);
  fs.writeFileSync(path.join(root, 'README.md'), 'a project\n');
  fs.writeFileSync(path.join(root, 'same.txt'), 'from the root\n');
  git(root, 'add', '.');
  git(root, ...IDENTITY, 'commit', '--quiet', '-m', 'first');
  return root;
}

/** What the root's checkout is: its status, HEAD, branch and index, byte for byte. */
function checkout(root: string): { status: string; head: string; branch: string; index: string } {
  const index = fs.readFileSync(path.join(root, '.git', 'index')).toString('base64');
  return {
    status: git(root, 'status', '--porcelain', '--untracked-files=all'),
    head: git(root, 'rev-parse', 'HEAD'),
    branch: git(root, 'symbolic-ref', 'HEAD'),
    index,
  };
}

async function spawnAll(h: TestHall, missions: Json[]): Promise<{ replies: Json[]; done: Json[] }> {
  const tap = await h.events('raider.');
  const replies = await Promise.all(missions.map((m) => h.request({ cmd: 'spawn', ...m })));
  const done = await Promise.all(replies.map((r) => tap.waitFor((e) => e.type === 'raider.done' && e.id === r.id)));
  tap.close();
  return { replies, done };
}

describe('worktree raiders', () => {
  it('two parallel runs write the same file in worktrees of their own; each keeps its branch with a work-in-progress commit', async () => {
    const root = repoRoot();
    const gate = path.join(tempRoot(), 'gate');
    const h = await startTestHall({ root, config: 'raiders: { bjorn: { worktree: true } }\n', env: { FAKE_RAIDER_GATE: gate } });
    hall = h;
    const before = checkout(root);
    const tap = await h.events('raider.');
    const replies = await Promise.all(
      ['a', 'b'].map((run) => h.request({ cmd: 'spawn', name: 'bjorn', mission: `write same.txt from run ${run}` })),
    );
    // Both raiders have written their file and wait: the runs overlap, each in its own worktree.
    const written = replies.map((r) => path.join(root, '.raider-hall', 'worktrees', r.id as string, 'same.txt'));
    await eventually(() => expect(written.map((f) => fs.readFileSync(f, 'utf8'))).toEqual(['from run a\n', 'from run b\n']));
    fs.writeFileSync(gate, '');
    const done = await Promise.all(replies.map((r) => tap.waitFor((e) => e.type === 'raider.done' && e.id === r.id)));
    tap.close();
    expect(before.status).toBe('');
    expect(replies[0]?.id).not.toBe(replies[1]?.id);
    for (const [i, text] of ['from run a', 'from run b'].entries()) {
      const id = replies[i]?.id as string;
      const worktree = path.join(root, '.raider-hall', 'worktrees', id);
      expect(done[i]).toMatchObject({
        status: 'completed',
        response: worktree,
        worktree,
        branch: `raider/${id}`,
        base: before.head.trim(),
        commits: 0,
        changed: ['same.txt'],
        wip_commit: true,
        worktree_kept: false,
      });
      expect(git(root, 'show', `raider/${id}:same.txt`)).toBe(`${text}\n`);
      expect(git(root, 'log', '-1', '--format=%s', `raider/${id}`)).toBe(`work in progress left by run ${id}\n`);
      expect(fs.existsSync(worktree)).toBe(false);
    }
    expect(fs.readFileSync(path.join(root, 'same.txt'), 'utf8')).toBe('from the root\n');
    expect(checkout(root)).toEqual(before);
  });

  it('a run that changed nothing leaves no worktree and no branch', async () => {
    const root = repoRoot();
    hall = await startTestHall({ root, config: 'raiders: { bjorn: { worktree: true } }\n' });
    const before = checkout(root);
    const { replies, done } = await spawnAll(hall, [{ name: 'bjorn', mission: 'answer nothing to do' }]);
    const id = replies[0]?.id as string;
    expect(done[0]).toMatchObject({ status: 'completed', branch: `raider/${id}`, commits: 0, changed: [], worktree_kept: false });
    expect(gitOk(root, 'rev-parse', '--verify', '--quiet', `refs/heads/raider/${id}`)).toBe(false);
    expect(fs.existsSync(path.join(root, '.raider-hall', 'worktrees', id))).toBe(false);
    expect(git(root, 'worktree', 'list', '--porcelain')).not.toContain(id);
    expect(checkout(root)).toEqual(before);
  });

  it("a run's own commit stays on its branch, counted, and the root never sees its file", async () => {
    const root = repoRoot();
    hall = await startTestHall({ root, config: 'raiders: { bjorn: { worktree: true } }\n' });
    const before = checkout(root);
    const { replies, done } = await spawnAll(hall, [{ name: 'bjorn', mission: 'commit notes.txt hello' }]);
    const id = replies[0]?.id as string;
    expect(done[0]).toMatchObject({ status: 'completed', commits: 1, changed: ['notes.txt'], wip_commit: false });
    expect(git(root, 'log', '--format=%s', `trunk..raider/${id}`)).toBe('fake raider wrote notes.txt\n');
    expect(git(root, 'show', `raider/${id}:notes.txt`)).toBe('hello\n');
    expect(fs.existsSync(path.join(root, 'notes.txt'))).toBe(false);
    expect(checkout(root)).toEqual(before);
  });

  it("the raider's --root and cwd are the worktree; copy files are in it, never in its change; keep: always keeps it", async () => {
    const root = repoRoot();
    fs.writeFileSync(path.join(root, '.env'), 'SECRET=1\n');
    hall = await startTestHall({
      root,
      config: 'raiders: { bjorn: { worktree: { copy: [.env, nope.yml], keep: always, dir: .raider-hall/kept } } }\n',
    });
    const before = checkout(root);
    expect(before.status).toBe('?? .env\n');
    const { replies, done } = await spawnAll(hall, [{ name: 'bjorn', mission: 'argv' }]);
    const id = replies[0]?.id as string;
    const worktree = path.join(root, '.raider-hall', 'kept', id);
    const seen = JSON.parse(done[0]?.response as string) as { argv: string[]; cwd: string };
    expect(seen.cwd).toBe(worktree);
    expect(seen.argv[seen.argv.indexOf('--root') + 1]).toBe(worktree);
    expect(done[0]).toMatchObject({ worktree, commits: 0, changed: [], wip_commit: false, worktree_kept: true });
    expect(fs.readFileSync(path.join(worktree, '.env'), 'utf8')).toBe('SECRET=1\n');
    expect(git(worktree, 'symbolic-ref', 'HEAD')).toBe(`refs/heads/raider/${id}\n`);
    expect(checkout(root)).toEqual(before);
  });

  it('a run that edits a copied file keeps its worktree: the edit is not committed, and not lost', async () => {
    const root = repoRoot();
    fs.writeFileSync(path.join(root, '.env'), 'SECRET=1\n');
    hall = await startTestHall({ root, config: 'raiders: { bjorn: { worktree: { copy: [.env] } } }\n' });
    const { replies, done } = await spawnAll(hall, [{ name: 'bjorn', mission: 'write .env SECRET=2' }]);
    const id = replies[0]?.id as string;
    const worktree = path.join(root, '.raider-hall', 'worktrees', id);
    expect(done[0]).toMatchObject({ worktree, commits: 0, changed: [], wip_commit: false, worktree_kept: true });
    expect(fs.readFileSync(path.join(worktree, '.env'), 'utf8')).toBe('SECRET=2\n');
    expect(fs.readFileSync(path.join(root, '.env'), 'utf8')).toBe('SECRET=1\n');
  });

  it('the built-in raider (scripted engine): its own journal is not a change; the file its tool wrote is', async () => {
    const root = repoRoot('.raider-hall*\n');
    const script = path.join(tempRoot(), 'script.yml');
    fs.writeFileSync(
      script,
      'replies:\n  - match: write\n    steps:\n      - tool: write_file\n        arguments: {path: notes.md, content: "by {{mission}}"}\n      - message: wrote\n  - steps:\n      - message: nothing\n',
    );
    hall = await startTestHall({
      root,
      config: 'raiders: { bjorn: { engine: scripted, permission_mode: bypassPermissions, worktree: true } }\n',
      env: { RAIDER_HALL_RAIDER_BIN: RAIDER_BIN, RAIDER_SCRIPT: script },
    });
    const before = checkout(root);
    const { replies, done } = await spawnAll(hall, [
      { name: 'bjorn', mission: 'look only' },
      { name: 'bjorn', mission: 'write notes' },
    ]);
    expect(done[0]?.error).toBeUndefined();
    expect(done[0]).toMatchObject({ status: 'completed', response: 'nothing', commits: 0, changed: [], worktree_kept: false });
    expect(gitOk(root, 'rev-parse', '--verify', '--quiet', `refs/heads/raider/${replies[0]?.id}`)).toBe(false);
    expect(done[1]).toMatchObject({ status: 'completed', response: 'wrote', changed: ['notes.md'], wip_commit: true });
    expect(git(root, 'show', `raider/${replies[1]?.id}:notes.md`)).toBe('by write notes');
    expect(git(root, 'ls-tree', '-r', '--name-only', `raider/${replies[1]?.id}`)).toBe('.gitignore\nREADME.md\nnotes.md\nsame.txt\n');
    expect(checkout(root)).toEqual(before);
  });

  describe('a run that ends before its raider runs leaves no worktree and no branch', () => {
    /** The root's repository holds no run's worktree or branch, and the worktrees directory is empty. */
    function nothingLeft(root: string): void {
      expect(git(root, 'branch', '--list', 'raider/*')).toBe('');
      expect(git(root, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
      expect(fs.readdirSync(path.join(root, '.raider-hall', 'worktrees'))).toEqual([]);
    }

    async function failedRun(h: TestHall, mission: Json): Promise<Json> {
      const tap = await h.events('raider.');
      const reply = await h.request({ cmd: 'spawn', ...mission });
      const done = await tap.waitFor((e) => e.type === 'raider.done');
      tap.close();
      expect(reply.error).toMatch(/could not be started/);
      return done;
    }

    it('a later step of its preparation fails (an ACP variable not set)', async () => {
      const root = repoRoot();
      const unset = '$' + '{WORKTREE_TEST_UNSET}';
      hall = await startTestHall({
        root,
        config: `raiders: { bjorn: { worktree: true, acp: { command: /bin/true, env: { KEY: "${unset}" } } } }\n`,
      });
      const done = await failedRun(hall, { name: 'bjorn', mission: 'answer x' });
      expect(done).toMatchObject({ status: 'failed' });
      expect(done.error).toContain(`${unset} not set`);
      nothingLeft(root);
    });

    it('its raider cannot be started (the spawn fails)', async () => {
      const root = repoRoot();
      const raider = path.join(tempRoot(), 'raider');
      fs.writeFileSync(raider, '#!/nonexistent/interpreter\n', { mode: 0o755 });
      hall = await startTestHall({ root, config: 'raiders: { bjorn: { worktree: true } }\n', env: { RAIDER_HALL_RAIDER_BIN: raider } });
      const done = await failedRun(hall, { name: 'bjorn', mission: 'answer x' });
      expect(done).toMatchObject({ status: 'failed', commits: 0, changed: [], worktree_kept: false });
      expect(done.error).toContain('ENOENT');
      nothingLeft(root);
    });

    it('a copy file cannot be copied (a FIFO)', async () => {
      const root = repoRoot();
      execFileSync('mkfifo', [path.join(root, 'pipe')]);
      hall = await startTestHall({ root, config: 'raiders: { bjorn: { worktree: { copy: [pipe] } } }\n' });
      const done = await failedRun(hall, { name: 'bjorn', mission: 'answer x' });
      expect(done).toMatchObject({ status: 'failed' });
      nothingLeft(root);
    });
  });

  it.each([
    ['not a repository', 'not_a_git_repo', (): string => tempRoot(), 'worktree: true', /not in a git repository.*git init/],
    [
      'a repository with no commit',
      'no_base',
      (): string => {
        const root = tempRoot();
        git(root, 'init', '--quiet');
        return root;
      },
      'worktree: true',
      /git repository .* has no commit yet.*git commit/,
    ],
    [
      'a base that does not exist',
      'no_base',
      repoRoot,
      'worktree: { base: nosuch }',
      /worktree base nosuch is not a commit in the git repository/,
    ],
  ])('%s: the mission is refused (%s) and nothing runs in the root', async (_what, reason, makeRoot, key, message) => {
    const root = makeRoot();
    hall = await startTestHall({ root, config: `raiders: { bjorn: { ${key} } }\n` });
    const tap = await hall.events('raider.');
    const reply = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'write oops.txt in the root' });
    expect(reply).toMatchObject({ status: 'refused', reason });
    expect(reply.error).toMatch(message);
    const refused = await tap.waitFor((e) => e.type === 'raider.refused');
    expect(refused).toMatchObject({ reason, name: 'bjorn' });
    tap.close();
    expect(fs.existsSync(path.join(root, 'oops.txt'))).toBe(false);
    expect(fs.existsSync(path.join(root, '.raider-hall', 'worktrees'))).toBe(false);
  });

  it("a binding goes on in one worktree and branch: its next run sees the last one's commits and files, across a restart", async () => {
    const root = repoRoot();
    const config = 'raiders: { bjorn: { worktree: true } }\n';
    hall = await startTestHall({ root, config });
    const before = checkout(root);
    const first = await spawnAll(hall, [{ name: '1bjorn', mission: 'commit notes.txt first' }]);
    const id = first.replies[0]?.id as string;
    const worktree = path.join(root, '.raider-hall', 'worktrees', id);
    const branch = `raider/slot-1bjorn/${id}`;
    expect(first.done[0]).toMatchObject({
      status: 'completed',
      response: worktree,
      worktree,
      branch,
      base: before.head.trim(),
      commits: 1,
      changed: ['notes.txt'],
      wip_commit: false,
      worktree_kept: true,
    });
    const second = await spawnAll(hall, [{ name: '1bjorn', mission: 'write draft.txt not yet committed' }]);
    expect(second.done[0]).toMatchObject({
      response: worktree,
      branch,
      commits: 0,
      changed: ['draft.txt', 'notes.txt'],
      wip_commit: false,
      worktree_kept: true,
    });

    // Across a restart: the binding's session and its worktree are the same.
    await hall.stop();
    hall = await startTestHall({ root, config });
    const third = await spawnAll(hall, [{ name: '1bjorn', mission: 'commit more.txt third' }]);
    expect(third.done[0]).toMatchObject({ response: worktree, branch, commits: 1, changed: ['draft.txt', 'more.txt', 'notes.txt'] });
    expect(git(root, 'log', '--format=%s', `trunk..${branch}`)).toBe('fake raider wrote more.txt\nfake raider wrote notes.txt\n');
    expect(fs.readFileSync(path.join(worktree, 'draft.txt'), 'utf8')).toBe('not yet committed\n');
    expect(git(worktree, 'status', '--porcelain')).toBe('?? draft.txt\n');
    // The session journal goes on too, kept in the hall root where the hall reads it.
    const journal = await spawnAll(hall, [{ name: '1bjorn', mission: 'journal again' }]);
    expect(JSON.parse(journal.done[0]?.response as string)).toEqual([`again@${worktree}`]);
    const session = journal.done[0]?.session as string;
    expect(fs.readFileSync(path.join(root, '.raider', 'sessions', `${session}.jsonl`), 'utf8')).toContain('again');

    // A plain run starts from the base, not from the binding's branch.
    const plain = await spawnAll(hall, [{ name: 'bjorn', mission: 'answer plain' }]);
    expect(plain.done[0]).toMatchObject({ base: before.head.trim(), branch: `raider/${plain.replies[0]?.id}`, changed: [] });
    expect(checkout(root)).toEqual(before);
  });

  it('session reset starts a fresh branch next time; the old one keeps its change in a work-in-progress commit', async () => {
    const root = repoRoot();
    hall = await startTestHall({ root, config: 'raiders: { bjorn: { worktree: true } }\n' });
    const before = checkout(root);
    const first = await spawnAll(hall, [{ name: '1bjorn', mission: 'journal remember me' }]);
    await spawnAll(hall, [{ name: '1bjorn', mission: 'write draft.txt left over' }]);
    const id = first.replies[0]?.id as string;
    const old = { worktree: path.join(root, '.raider-hall', 'worktrees', id), branch: `raider/slot-1bjorn/${id}` };
    const session = first.done[0]?.session as string;
    expect(await hall.request({ cmd: 'session_reset', binding: 'slot:1bjorn' })).toMatchObject({ reset: 1, session });

    const next = await spawnAll(hall, [{ name: '1bjorn', mission: 'answer fresh' }]);
    const nextId = next.replies[0]?.id as string;
    expect(next.done[0]).toMatchObject({
      worktree: path.join(root, '.raider-hall', 'worktrees', nextId),
      branch: `raider/slot-1bjorn/${nextId}`,
      base: before.head.trim(),
      changed: [],
    });
    expect(next.done[0]?.session).not.toBe(session);
    // The old worktree went; its branch holds the file it left, committed by the hall.
    expect(fs.existsSync(old.worktree)).toBe(false);
    expect(git(root, 'show', `${old.branch}:draft.txt`)).toBe('left over\n');
    expect(git(root, 'log', '-1', '--format=%s', old.branch)).toBe(`work in progress left by run ${id}\n`);
    // Its session's journal is the hall root's, and stays.
    expect(fs.readFileSync(path.join(root, '.raider', 'sessions', `${session}.jsonl`), 'utf8')).toContain('remember me');
    expect(checkout(root)).toEqual(before);
  });
});
