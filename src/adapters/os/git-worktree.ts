/**
 * A run's git worktree (docs/worktrees.md): made before the raider starts,
 * settled once it has ended (a binding's stays for its next run), finished
 * at a hall's start when a killed hall left it. Every git command is a child process, never a
 * synchronous one: the hall's event loop keeps answering meanwhile. The
 * root's own checkout, branch and index are never written: new branches are
 * made by `git worktree add -b`, commits happen inside the run's worktree.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { definedFields } from '../../domain/defined-fields.js';
import {
  DEFAULT_WORKTREES_DIR,
  bindingBranch,
  diskCapProblem,
  parseRunBranch,
  type RunWorktree,
  runBranch,
  type WorktreeResult,
  type WorktreeSettings,
} from '../../domain/worktree.js';

/** Why a run gets no worktree: the mission is refused with this reason. */
export type WorktreeRefusalReason = 'not_a_git_repo' | 'no_base' | 'worktree_disk';

export type WorktreeMade = { ok: true; worktree: RunWorktree } | { ok: false; reason: WorktreeRefusalReason; error: string };

export interface GitResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Author of the hall's work-in-progress commit when the repository names none. */
const FALLBACK_IDENTITY = {
  GIT_AUTHOR_NAME: 'Raider Hall',
  GIT_AUTHOR_EMAIL: 'raider-hall@localhost',
  GIT_COMMITTER_NAME: 'Raider Hall',
  GIT_COMMITTER_EMAIL: 'raider-hall@localhost',
};

export function git(cwd: string, args: readonly string[], env?: Record<string, string>): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['-C', cwd, ...args],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env, GIT_TERMINAL_PROMPT: '0' } },
      (err, stdout, stderr) => {
        // No git at all is the hall's problem to report, not a refusal of this one mission.
        if (err && 'code' in err && err.code === 'ENOENT') reject(new Error('git is not installed (or not on PATH)'));
        else resolve({ ok: err === null, stdout, stderr });
      },
    );
  });
}

export async function gitOrThrow(cwd: string, args: readonly string[], env?: Record<string, string>): Promise<string> {
  const r = await git(cwd, args, env);
  if (!r.ok) throw new Error(`git ${args.join(' ')} failed in ${cwd}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

// Runs that start together must not race for the repository's own locks (refs, worktree records).
const queues = new Map<string, Promise<unknown>>();
export function serialised<T>(repo: string, job: () => Promise<T>): Promise<T> {
  const previous = queues.get(repo) ?? Promise.resolve();
  const next = previous.then(job, job);
  const tail = next.catch(() => undefined);
  queues.set(repo, tail);
  void tail.then(() => {
    if (queues.get(repo) === tail) queues.delete(repo);
  });
  return next;
}

/** Where a run's worktree goes: the hall's records directory, and the binding whose runs go on in it. */
export interface WorktreePlace {
  /** The directory of the hall's records of the worktrees it made (see `WorktreeRecord`). */
  records: string;
  binding?: string;
  /** The hall root's session journals: a binding's raider finds them there from its worktree. */
  sessions?: string;
}

/**
 * Makes the run's worktree on a new branch (`raider/RUN_ID`, or the
 * binding's branch), or says why it cannot. The hall's record of it is
 * written before git makes it, so a hall killed meanwhile leaves nothing the
 * next start cannot finish (`reconcileWorktree`).
 */
export async function makeRunWorktree(
  root: string,
  runId: string,
  settings: WorktreeSettings,
  place: WorktreePlace,
  /** `worktree.max_disk`: the bytes all run worktrees may take; null = no cap. */
  maxDisk: number | null = null,
): Promise<WorktreeMade> {
  const top = await git(root, ['rev-parse', '--show-toplevel']);
  if (!top.ok) {
    return {
      ok: false,
      reason: 'not_a_git_repo',
      error: `the hall root ${root} is not in a git repository (git: ${top.stderr.trim()}); run 'git init' and commit there, or drop the raider's worktree key`,
    };
  }
  const repo = top.stdout.trim();
  const baseName = settings.base ?? 'HEAD';
  const base = await git(root, ['rev-parse', '--verify', '--quiet', `${baseName}^{commit}`]);
  if (!base.ok) {
    return {
      ok: false,
      reason: 'no_base',
      error:
        settings.base === undefined
          ? `the git repository ${repo} has no commit yet, so a worktree has nothing to start from; commit something first ('git commit')`
          : `the worktree base ${settings.base} is not a commit in the git repository ${repo}; name an existing branch, tag or commit as worktree.base`,
    };
  }
  const dir = path.join(root, settings.dir ?? DEFAULT_WORKTREES_DIR, runId);
  const inRepo = path.relative(repo, fs.realpathSync(root));
  const worktree: RunWorktree = {
    repo,
    path: dir,
    cwd: path.join(dir, inRepo),
    branch: place.binding === undefined ? runBranch(runId) : bindingBranch(place.binding, runId),
    base: base.stdout.trim(),
    copied: [],
    keep: settings.keep,
    record: path.join(place.records, `${runId}.json`),
    ...definedFields({ binding: place.binding }),
  };
  writeRecord(worktree, 'creating');
  const overCap = await serialised(repo, async () => {
    // Measured in the queue: runs that start together each count the worktrees made before them.
    const problem = maxDisk === null ? null : await diskCapCheck(repo, worktree.base, maxDisk);
    if (problem !== null) return problem;
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    // --no-track: the branch is the run's own, whatever the base is.
    await gitOrThrow(repo, ['worktree', 'add', '--quiet', '--no-track', '-b', worktree.branch, dir, worktree.base]);
    return null;
  });
  if (overCap !== null) {
    // Refused before git made anything: the record has nothing to finish.
    forgetRecord(worktree);
    return { ok: false, reason: 'worktree_disk', error: overCap };
  }
  try {
    for (const file of settings.copy) {
      const from = path.join(root, file);
      if (!fs.existsSync(from)) continue;
      const to = path.join(worktree.cwd, file);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.cpSync(from, to, { recursive: true });
      worktree.copied.push({ source: from, file: path.relative(dir, to) });
    }
    if (place.sessions !== undefined) linkSessions(worktree, place.sessions);
    writeRecord(worktree, 'made');
  } catch (err) {
    // Nothing ran in it yet: the worktree and its branch go, as for a run that changed nothing.
    await discardWorktree(worktree);
    throw err;
  }
  return { ok: true, worktree };
}

/**
 * A binding's raider keeps its session journal under its root, the worktree:
 * its `.raider/sessions` there is the hall root's, so the journal stays where
 * the hall and its faces read it, and goes on across worktrees.
 */
function linkSessions(wt: RunWorktree, sessions: string): void {
  const link = path.join(wt.cwd, '.raider', 'sessions');
  fs.mkdirSync(sessions, { recursive: true });
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.symlinkSync(sessions, link);
}

/**
 * Settles a run's worktree once its raider has ended: changes left
 * uncommitted go into a work-in-progress commit on the run's branch (copied
 * files excepted), a branch without changes is deleted, and the worktree is
 * removed unless `keep: always`. A change is never thrown away: when the
 * commit fails, or the run changed a copied file, the worktree stays. The
 * hall's record of the worktree goes once it is settled.
 */
export async function settleRunWorktree(wt: RunWorktree): Promise<WorktreeResult> {
  const commits = Number((await gitOrThrow(wt.path, ['rev-list', '--count', `${wt.base}..HEAD`])).trim());
  const own = [...wt.copied.map((c) => c.file), ...raiderOwnFiles(wt)];
  const excluded = own.map((file) => `:(exclude,literal)${file}`);
  // Added, then put back as HEAD has them: `add` with exclude pathspecs fails when one names an ignored path.
  await gitOrThrow(wt.path, ['add', '--all']);
  // (Never without paths: a bare reset would put back the run's whole change.)
  if (own.length > 0) await gitOrThrow(wt.path, ['reset', '--quiet', 'HEAD', '--', ...own.map((file) => `:(literal)${file}`)]);
  const staged = await git(wt.path, ['diff', '--cached', '--quiet']);
  let wip = false;
  let commitError: string | undefined;
  if (!staged.ok) {
    const named = await git(wt.path, ['config', '--get', 'user.email']);
    const r = await git(
      wt.path,
      ['-c', 'commit.gpgsign=false', 'commit', '--quiet', '--no-verify', '-m', `work in progress left by run ${path.basename(wt.path)}`],
      named.ok ? undefined : FALLBACK_IDENTITY,
    );
    if (r.ok) wip = true;
    else commitError = r.stderr.trim() || r.stdout.trim();
  }
  const changed = (await gitOrThrow(wt.path, ['diff', '--name-only', '-z', wt.base, '--', '.', ...excluded]))
    .split('\0')
    .filter((f) => f !== '');
  const result = { worktree: wt.path, branch: wt.branch, base: wt.base, commits, changed, wip };
  // A copied file is not committed (it may hold secrets): one the run changed keeps the worktree instead.
  const copyChanged = wt.copied.some((c) => !sameContent(c.source, path.join(wt.path, c.file)));
  if (commitError !== undefined || copyChanged || wt.keep === 'always') {
    forgetRecord(wt);
    return { ...result, kept: true };
  }
  // From here on the change is all on the branch: a hall killed during the removal finishes it at its next start.
  writeRecord(wt, 'removing');
  await serialised(wt.repo, async () => {
    await gitOrThrow(wt.repo, ['worktree', 'remove', '--force', wt.path]);
    if (changed.length === 0 && commits === 0) await gitOrThrow(wt.repo, ['branch', '-D', '--quiet', wt.branch]);
  });
  forgetRecord(wt);
  return { ...result, kept: false };
}

/**
 * What a binding's run did in the worktree the binding goes on in, which
 * stays as it is for the binding's next run: the commits since the run
 * started and the files changed against the base, committed or not.
 */
export async function reportRunWorktree(wt: RunWorktree): Promise<WorktreeResult> {
  const commits = Number((await gitOrThrow(wt.path, ['rev-list', '--count', `${wt.start ?? wt.base}..HEAD`])).trim());
  const excluded = [...wt.copied.map((c) => c.file), ...raiderOwnFiles(wt)].map((file) => `:(exclude,literal)${file}`);
  const tracked = await gitOrThrow(wt.path, ['diff', '--name-only', '-z', wt.base, '--', '.', ...excluded]);
  const untracked = await gitOrThrow(wt.path, ['ls-files', '--others', '--exclude-standard', '-z', '--', '.', ...excluded]);
  const changed = [...new Set(`${tracked}\0${untracked}`.split('\0').filter((f) => f !== ''))].sort();
  return { worktree: wt.path, branch: wt.branch, base: wt.base, commits, changed, wip: false, kept: true };
}

/** The commit a worktree's checkout is at. */
export async function worktreeHead(wt: RunWorktree): Promise<string> {
  return (await gitOrThrow(wt.path, ['rev-parse', 'HEAD'])).trim();
}

/** Removes a worktree nothing ran in since it was settled, and its branch unless it holds commits. */
async function discardWorktree(wt: RunWorktree): Promise<void> {
  writeRecord(wt, 'removing');
  await serialised(wt.repo, async () => {
    // A worktree cut short may be unknown to git, or locked while it was being made: then only its files go.
    await git(wt.repo, ['worktree', 'remove', '--force', '--force', wt.path]);
    fs.rmSync(wt.path, { recursive: true, force: true });
    await gitOrThrow(wt.repo, ['worktree', 'prune']);
    const ahead = await git(wt.repo, ['rev-list', '--count', `${wt.base}..refs/heads/${wt.branch}`]);
    if (ahead.ok && Number(ahead.stdout.trim()) === 0) await gitOrThrow(wt.repo, ['branch', '-D', '--quiet', wt.branch]);
  });
  forgetRecord(wt);
}

/**
 * Finishes a worktree the hall recorded and no live run works in: one that
 * was being made or removed when the hall died is removed (nothing ran in it
 * since it was last settled), its branch kept only when it holds commits; a
 * whole one is settled as at a run's end (a change is committed, never lost).
 */
export async function reconcileWorktree(record: WorktreeRecord): Promise<WorktreeResult | null> {
  if (record.state !== 'made') {
    await discardWorktree(record.worktree);
    return null;
  }
  const { binding: _goesOn, ...ended } = record.worktree;
  return settleRunWorktree(ended);
}

/** Drops git's records of worktrees whose directories are gone; a directory outside a repository is left be. */
export async function pruneWorktrees(dir: string): Promise<void> {
  await git(dir, ['worktree', 'prune']);
}

/** The hall's record of a worktree it made, and how far it got. */
export interface WorktreeRecord {
  state: 'creating' | 'made' | 'removing';
  worktree: RunWorktree;
}

function writeRecord(wt: RunWorktree, state: WorktreeRecord['state']): void {
  if (wt.record === undefined) return;
  fs.mkdirSync(path.dirname(wt.record), { recursive: true });
  // Written whole or not at all: a hall killed meanwhile leaves the previous record.
  const temp = `${wt.record}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify({ state, worktree: wt } satisfies WorktreeRecord)}\n`);
  fs.renameSync(temp, wt.record);
}

function forgetRecord(wt: RunWorktree): void {
  if (wt.record !== undefined) fs.rmSync(wt.record, { force: true });
}

/**
 * The refusal of a worktree that would take the hall's worktrees (plain
 * runs' and bindings' alike) past `max_disk` bytes; null when it fits.
 */
async function diskCapCheck(repo: string, base: string, maxDisk: number): Promise<string | null> {
  const used = await diskUse((await runWorktrees(repo)).map((w) => w.path));
  return diskCapProblem(maxDisk, used, await checkoutSize(repo, base));
}

/** What a checkout of `commit` takes, about: the bytes of its files. */
async function checkoutSize(repo: string, commit: string): Promise<number> {
  const listing = await gitOrThrow(repo, ['ls-tree', '-r', '-l', '-z', commit]);
  let bytes = 0;
  for (const entry of listing.split('\0')) {
    // MODE TYPE OBJECT SIZE\tPATH; SIZE is "-" for a submodule.
    const size = Number(entry.split('\t', 1)[0]?.trim().split(/\s+/)[3]);
    if (Number.isFinite(size)) bytes += size;
  }
  return bytes;
}

/** A worktree of the repository on a branch of the hall's (`raider/RUN_ID` or `raider/BINDING/RUN_ID`). */
export interface RunWorktreeEntry {
  path: string;
  branch: string;
  /** The run that made it (a binding's first run on it). */
  run: string;
}

/** The worktrees on the hall's branches, from `git worktree list` (wherever a raider's `dir` put them). */
export async function runWorktrees(repo: string): Promise<RunWorktreeEntry[]> {
  // Lines, not -z (git 2.36): the hall's worktree paths hold no line break.
  const out = await gitOrThrow(repo, ['worktree', 'list', '--porcelain']);
  const found: RunWorktreeEntry[] = [];
  let at: string | undefined;
  for (const line of out.split('\n')) {
    if (line.startsWith('worktree ')) at = line.slice('worktree '.length);
    else if (line.startsWith('branch refs/heads/') && at !== undefined) {
      const branch = line.slice('branch refs/heads/'.length);
      const run = parseRunBranch(branch)?.run;
      // One removed by hand stays in git's records until `git worktree prune`: it is no worktree any more.
      if (run !== undefined && fs.existsSync(at)) found.push({ path: at, branch, run });
    }
  }
  return found;
}

/** Bytes the directories take on disk (`du`, a child process: a worktree may hold many files). */
export function diskUse(dirs: readonly string[]): Promise<number> {
  const present = dirs.filter((d) => fs.existsSync(d));
  if (present.length === 0) return Promise.resolve(0);
  return new Promise((resolve, reject) => {
    execFile('du', ['-s', '-k', '-c', '--', ...present], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      // A file that went while du walked makes it fail, with the totals still printed.
      const total = /^(\d+)\s+total$/m.exec(stdout);
      if (total?.[1] !== undefined) resolve(Number(total[1]) * 1024);
      else reject(err ?? new Error(`du printed no total: ${stdout}`));
    });
  });
}

/** Whether two files (or directories, file by file) hold the same bytes; small local files, read at once. */
function sameContent(a: string, b: string): boolean {
  try {
    const sa = fs.statSync(a);
    const sb = fs.statSync(b);
    if (sa.isDirectory() !== sb.isDirectory()) return false;
    if (!sa.isDirectory()) return sa.size === sb.size && fs.readFileSync(a).equals(fs.readFileSync(b));
    const names = fs.readdirSync(a).sort();
    const others = fs.readdirSync(b).sort();
    return names.length === others.length && names.every((n, i) => n === others[i] && sameContent(path.join(a, n), path.join(b, n)));
  } catch {
    return false;
  }
}

/**
 * What the built-in raider writes under its --root for itself (its session
 * journal, its lib target, the .gitignore beside them: src/raider/journal.ts):
 * never part of the run's change.
 */
export function raiderOwnFiles(wt: Pick<RunWorktree, 'path' | 'cwd'>): string[] {
  const dir = path.relative(wt.path, path.join(wt.cwd, '.raider'));
  return ['sessions', 'lib', '.gitignore'].map((name) => path.join(dir, name));
}
