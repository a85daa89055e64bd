/**
 * `raider hall worktree list / rm / prune` and `worktree.max_disk`
 * (docs/worktrees.md) through a real hall, the `raider` command as its own
 * process, real git and the fake raider.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, IDENTITY, repoRoot } from '../support/git-repo.js';
import { type Json, runCli, startTestHall, type TestHall, tempRoot } from '../support/test-hall.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

function hasBranch(root: string, branch: string): boolean {
  return git(root, 'branch', '--list', branch).trim() !== '';
}

async function run(h: TestHall, mission: string, name = 'bjorn'): Promise<{ id: string; done: Json }> {
  const tap = await h.events('raider.');
  const reply = await h.request({ cmd: 'spawn', name, mission });
  const id = reply.id as string;
  const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === id);
  tap.close();
  return { id, done };
}

/** `raider hall worktree ARGS --json` as its own process: its exit code and its JSON. */
async function worktreeCli(root: string, ...args: string[]): Promise<{ code: number | null; json: Json; stderr: string }> {
  const r = await runCli(['hall', 'worktree', ...args, '--json'], { cwd: root });
  return { code: r.code, json: JSON.parse(r.stdout) as Json, stderr: r.stderr };
}

/** A branch as a run of long ago left it: `raider/bjorn-1000000000` with one commit of its own. */
function oldRunBranch(root: string): string {
  const branch = 'raider/bjorn-1000000000';
  const dir = path.join(tempRoot(), 'old');
  git(root, 'worktree', 'add', '--quiet', '-b', branch, dir, 'trunk');
  fs.writeFileSync(path.join(dir, 'old.txt'), 'old\n');
  git(dir, 'add', 'old.txt');
  git(dir, ...IDENTITY, 'commit', '--quiet', '-m', 'old work');
  git(root, 'worktree', 'remove', dir);
  return branch;
}

describe('raider hall worktree', () => {
  it('list: each run branch with its base, changed files, age and size; a live run is in use and cannot be removed', async () => {
    const root = repoRoot();
    const base = git(root, 'rev-parse', 'HEAD').trim();
    hall = await startTestHall({ root, config: 'raiders: { bjorn: { worktree: true }, ivar: { worktree: { keep: always } } }\n' });
    const committed = await run(hall, 'commit notes.txt hello');
    const kept = await run(hall, 'write kept.txt left', 'ivar');
    const gate = path.join(tempRoot(), 'gate');
    const live = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${gate}` });

    const list = await worktreeCli(root, 'list');
    expect(list.code).toBe(0);
    const byRun = new Map((list.json.worktrees as Json[]).map((w) => [w.run, w]));
    expect(byRun.get(committed.id)).toEqual({
      run: committed.id,
      branch: `raider/${committed.id}`,
      base,
      changed: ['notes.txt'],
      age: expect.any(Number),
      size: 0,
      merged: false,
      uncommitted: false,
      in_use: false,
    });
    const keptPath = path.join(fs.realpathSync(root), '.raider-hall', 'worktrees', kept.id);
    expect(byRun.get(kept.id)).toMatchObject({ path: keptPath, base, changed: ['kept.txt'], in_use: false });
    expect(byRun.get(kept.id)?.size).toBeGreaterThan(0);
    expect(byRun.get(live.id)).toMatchObject({ branch: `raider/${live.id}`, changed: [], in_use: true });

    const table = await runCli(['hall', 'worktree', 'list'], { cwd: root });
    expect(table.stdout).toMatch(/^RUN +BRANCH +BASE +CHANGED +AGE +SIZE +STATE/);
    expect(table.stdout).toContain(`raider/${committed.id}`);
    expect(table.stdout).toMatch(new RegExp(`${live.id} .* in-use`));

    const refused = await worktreeCli(root, 'rm', live.id);
    expect(refused).toMatchObject({ code: 1, json: { code: 'worktree_in_use' } });
    expect(hasBranch(root, `raider/${live.id}`)).toBe(true);
    fs.writeFileSync(gate, '');
  });

  it('rm: removes a run worktree and branch by run id or branch; refuses branches that are not a run branch, and unknown ones', async () => {
    const root = repoRoot();
    hall = await startTestHall({ root, config: 'raiders: { bjorn: { worktree: { keep: always } } }\n' });
    const a = await run(hall, 'commit a.txt a');
    const b = await run(hall, 'commit b.txt b');
    const worktreeA = path.join(fs.realpathSync(root), '.raider-hall', 'worktrees', a.id);
    expect(fs.existsSync(worktreeA)).toBe(true);

    const byRun = await worktreeCli(root, 'rm', a.id);
    expect(byRun).toMatchObject({ code: 0, json: { removed: 1, run: a.id, branch: `raider/${a.id}`, worktree: worktreeA } });
    expect(fs.existsSync(worktreeA)).toBe(false);
    expect(hasBranch(root, `raider/${a.id}`)).toBe(false);
    const byBranch = await worktreeCli(root, 'rm', `raider/${b.id}`);
    expect(byBranch).toMatchObject({ code: 0, json: { removed: 1, run: b.id } });
    expect(hasBranch(root, `raider/${b.id}`)).toBe(false);

    git(root, 'branch', 'feature/mine');
    git(root, 'branch', 'raider/not-a-run');
    for (const other of ['trunk', 'feature/mine', 'raider/not-a-run']) {
      expect(await worktreeCli(root, 'rm', other)).toMatchObject({ code: 1, json: { code: 'not_our_branch' } });
      expect(hasBranch(root, other)).toBe(true);
    }
    expect(await worktreeCli(root, 'rm', a.id)).toMatchObject({ code: 1, json: { code: 'worktree_not_found' } });

    // A worktree deleted by hand: git still records it (and it holds the branch); list and rm cope.
    const c = await run(hall, 'commit c.txt c');
    fs.rmSync(path.join(root, '.raider-hall', 'worktrees', c.id), { recursive: true });
    const listed = await worktreeCli(root, 'list');
    expect((listed.json.worktrees as Json[]).find((w) => w.run === c.id)).toMatchObject({ changed: ['c.txt'], size: 0 });
    expect(await worktreeCli(root, 'rm', c.id)).toMatchObject({ code: 0, json: { removed: 1, run: c.id } });
    expect(hasBranch(root, `raider/${c.id}`)).toBe(false);
  });

  it('prune: merged branches and those older than worktree.max_age go; unmerged young ones and uncommitted work stay; also with no hall running', async () => {
    const root = repoRoot();
    hall = await startTestHall({
      root,
      config: 'worktree: { max_age: 86400 }\nraiders: { bjorn: { worktree: true }, ivar: { worktree: { keep: always } } }\n',
    });
    const merged = await run(hall, 'commit merged.txt in');
    const squashed = await run(hall, 'commit squashed.txt in');
    const young = await run(hall, 'commit young.txt stays');
    const dirty = await run(hall, 'answer nothing', 'ivar');
    const old = oldRunBranch(root);
    git(root, ...IDENTITY, 'merge', '--quiet', '--no-edit', `raider/${merged.id}`);
    git(root, 'merge', '--quiet', '--squash', `raider/${squashed.id}`);
    git(root, ...IDENTITY, 'commit', '--quiet', '-m', 'squashed');
    // Work nobody committed in a kept worktree whose branch is merged (it has no commit of its own).
    const dirtyPath = path.join(fs.realpathSync(root), '.raider-hall', 'worktrees', dirty.id);
    fs.writeFileSync(path.join(dirtyPath, 'README.md'), 'edited by hand\n');

    const pruned = await worktreeCli(root, 'prune');
    expect(pruned.code).toBe(0);
    expect(pruned.json.pruned).toEqual(
      expect.arrayContaining([
        { run: merged.id, branch: `raider/${merged.id}`, reason: 'merged' },
        { run: squashed.id, branch: `raider/${squashed.id}`, reason: 'merged' },
        { run: 'bjorn-1000000000', branch: old, reason: 'max_age' },
      ]),
    );
    expect(pruned.json.pruned).toHaveLength(3);
    expect(pruned.json.uncommitted).toEqual([]);
    for (const gone of [`raider/${merged.id}`, `raider/${squashed.id}`, old]) expect(hasBranch(root, gone)).toBe(false);
    expect(hasBranch(root, `raider/${young.id}`)).toBe(true);
    expect(hasBranch(root, `raider/${dirty.id}`)).toBe(true);
    expect(fs.readFileSync(path.join(dirtyPath, 'README.md'), 'utf8')).toBe('edited by hand\n');

    // No hall: the same command on the repository itself, with the config's max_age.
    await hall.stop();
    hall = undefined;
    const older = oldRunBranch(root);
    const offline = await worktreeCli(root, 'prune');
    expect(offline).toMatchObject({ code: 0, json: { pruned: [{ run: 'bjorn-1000000000', branch: older, reason: 'max_age' }] } });
    const list = await worktreeCli(root, 'list');
    expect((list.json.worktrees as Json[]).map((w) => w.run).sort()).toEqual([dirty.id, young.id].sort());
    expect((list.json.worktrees as Json[]).find((w) => w.run === dirty.id)).toMatchObject({ uncommitted: true, merged: false });
  });

  it("a binding's worktree and branch (raider/BINDING/RUN_ID) are listed in use and left alone, a hall running or not, until a start settles them after a session reset", async () => {
    const root = repoRoot();
    // Only the hall's files ignored: the binding's session link in its worktree is no change, as at a run's end.
    fs.writeFileSync(path.join(root, '.gitignore'), '.raider-hall*\n');
    git(root, ...IDENTITY, 'commit', '--quiet', '-am', 'ignore the hall only');
    const config = 'raiders: { bjorn: { worktree: true } }\n';
    hall = await startTestHall({ root, config });
    const first = await run(hall, 'commit notes.txt first', '1bjorn');
    const branch = `raider/slot-1bjorn/${first.id}`;
    const worktree = path.join(fs.realpathSync(root), '.raider-hall', 'worktrees', first.id);
    expect(first.done).toMatchObject({ branch, worktree_kept: true });
    git(root, ...IDENTITY, 'merge', '--quiet', '--no-edit', branch);

    const inUse = {
      run: first.id,
      branch,
      path: worktree,
      binding: 'slot:1bjorn',
      changed: ['notes.txt'],
      uncommitted: false,
      in_use: true,
    };
    const list = await worktreeCli(root, 'list');
    expect((list.json.worktrees as Json[]).find((w) => w.branch === branch)).toMatchObject(inUse);
    for (const target of [first.id, branch]) {
      expect(await worktreeCli(root, 'rm', target)).toMatchObject({ code: 1, json: { code: 'worktree_in_use' } });
    }
    // Merged, but the binding goes on in it.
    expect(await worktreeCli(root, 'prune')).toMatchObject({ code: 0, json: { pruned: [], uncommitted: [] } });
    expect(fs.existsSync(worktree)).toBe(true);

    // With no hall, the hall's records still say so: the binding goes on in it at the next start.
    await hall.stop();
    hall = undefined;
    const offline = await worktreeCli(root, 'list');
    expect((offline.json.worktrees as Json[]).find((w) => w.branch === branch)).toMatchObject(inUse);
    expect(await worktreeCli(root, 'rm', first.id)).toMatchObject({ code: 1, json: { code: 'worktree_in_use' } });
    expect(await worktreeCli(root, 'prune')).toMatchObject({ code: 0, json: { pruned: [] } });

    // A session reset lets the next start settle it: the worktree goes, the branch stays for prune.
    hall = await startTestHall({ root, config });
    expect(await hall.request({ cmd: 'session_reset', binding: 'slot:1bjorn' })).toMatchObject({ reset: 1 });
    await hall.stop();
    hall = await startTestHall({ root, config });
    expect(fs.existsSync(worktree)).toBe(false);
    const settled = await worktreeCli(root, 'list');
    expect((settled.json.worktrees as Json[]).find((w) => w.branch === branch)).toMatchObject({ in_use: false, merged: true });
    const pruned = await worktreeCli(root, 'prune');
    expect(pruned).toMatchObject({ code: 0, json: { pruned: [{ run: first.id, branch, reason: 'merged' }] } });
    expect(hasBranch(root, branch)).toBe(false);
  });

  it('outside a git repository the commands are refused with not_a_git_repo', async () => {
    const root = tempRoot();
    fs.writeFileSync(path.join(root, '.raider-hall.yml'), 'raiders: { bjorn: {} }\n');
    expect(await worktreeCli(root, 'list')).toMatchObject({ code: 1, json: { code: 'not_a_git_repo' } });
  });
});

describe('worktree.max_disk', () => {
  it('a run whose worktree would take the worktrees past the cap is refused (worktree_disk) until one is removed', async () => {
    const root = repoRoot();
    hall = await startTestHall({
      root,
      config: 'worktree: { max_disk: 1048576 }\nraiders: { bjorn: { worktree: { keep: always } } }\n',
    });
    const first = await run(hall, 'answer first');
    expect(first.done).toMatchObject({ status: 'completed', worktree_kept: true });
    // The kept worktree grows past the cap (a build's output, say).
    fs.writeFileSync(path.join(first.done.worktree as string, 'big.bin'), Buffer.alloc(2 * 1048576, 1));

    const tap = await hall.events('raider.');
    const refused = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer second' });
    expect(refused).toMatchObject({ status: 'refused', reason: 'worktree_disk' });
    expect(refused.error).toMatch(/the worktrees take 2\.\d MiB .* over worktree\.max_disk \(1\.0 MiB\).*raider hall worktree prune/);
    expect(await tap.waitFor((e) => e.type === 'raider.refused')).toMatchObject({ reason: 'worktree_disk', name: 'bjorn' });
    tap.close();
    expect(fs.readdirSync(path.join(root, '.raider-hall', 'worktrees'))).toEqual([first.id]);

    expect((await worktreeCli(root, 'rm', first.id)).code).toBe(0);
    const third = await run(hall, 'answer third');
    expect(third.done).toMatchObject({ status: 'completed', worktree_kept: true });
  });

  it("a binding's worktree counts too; a refused run leaves no record of a worktree", async () => {
    const root = repoRoot();
    hall = await startTestHall({ root, config: 'worktree: { max_disk: 1048576 }\nraiders: { bjorn: { worktree: true } }\n' });
    const bound = await run(hall, 'write big.bin not yet', '1bjorn');
    expect(bound.done).toMatchObject({ branch: `raider/slot-1bjorn/${bound.id}`, worktree_kept: true });
    fs.writeFileSync(path.join(bound.done.worktree as string, 'big.bin'), Buffer.alloc(2 * 1048576, 1));

    const refused = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer plain' });
    expect(refused).toMatchObject({ status: 'refused', reason: 'worktree_disk' });
    expect(fs.readdirSync(path.join(root, '.raider-hall', 'state', 'worktrees'))).toEqual([`${bound.id}.json`]);
    // The binding itself goes on in the worktree it has: nothing new to take.
    expect((await run(hall, 'answer again', '1bjorn')).done).toMatchObject({ status: 'completed', worktree: bound.done.worktree });
  });
});
