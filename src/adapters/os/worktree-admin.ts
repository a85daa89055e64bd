/**
 * `raider hall worktree list / rm / prune` (docs/worktrees.md): the runs'
 * branches (`raider/RUN_ID`, a binding's `raider/BINDING/RUN_ID`) and the
 * worktrees still on disk, read from git itself, and the hall's records of
 * the worktrees it made (src/adapters/storage/worktree-records.ts): a
 * recorded worktree is in use (a run starting or working in it, a binding
 * going on in it, the hall making or removing it) and is never removed here.
 * The same code answers inside a running hall and on the files when no hall
 * runs. Every git command is a child process; removals go through the
 * repository's queue, as the runs' own worktree commands do.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseRunId } from '../../domain/run-id.js';
import { slotOf } from '../../domain/names.js';
import { ownEntry } from '../../domain/own-entry.js';
import { type ListedWorktree, type PruneReason, parseRunBranch, pruneReason, runBranch } from '../../domain/worktree.js';
import type { HallConfig, RaiderEntry } from '../../ports/hall-config.js';
import { type HallPaths, worktreeRecordsDir } from '../../ports/hall-paths.js';
import type { CommandHandlers } from '../../protocol/command-service.js';
import type { ErrorReply } from '../../protocol/replies.js';
import { readWorktreeRecord, recordRun, worktreeRecordFiles } from '../storage/worktree-records.js';
import {
  diskUse,
  git,
  gitOrThrow,
  raiderOwnFiles,
  type RunWorktreeEntry,
  runWorktrees,
  serialised,
  type WorktreeRecord,
} from './git-worktree.js';

export interface WorktreeAdmin {
  /** The hall root. */
  root: string;
  /** The directory of the hall's records of the worktrees it made: a recorded one is in use. */
  records: string;
  /** The hall's raider entries: a run's `worktree.base` says what its branch merges into. */
  raiders: Readonly<Record<string, RaiderEntry>>;
  /** `worktree.max_age` in seconds; null = no limit. */
  maxAge: number | null;
  now: number;
}

/** The hall's view for the worktree commands, now: the same in a running hall and on the files. */
export function worktreeAdmin(paths: HallPaths, config: Pick<HallConfig, 'raiders' | 'worktree'>): WorktreeAdmin {
  return {
    root: paths.root,
    records: worktreeRecordsDir(paths),
    raiders: config.raiders,
    maxAge: config.worktree.max_age,
    now: Date.now(),
  };
}

/** Why a `worktree` command is refused: the words may change, the codes do not. */
export type WorktreeErrorCode = 'not_a_git_repo' | 'worktree_not_found' | 'not_our_branch' | 'worktree_in_use';

export class WorktreeCommandError extends Error {
  constructor(
    readonly code: WorktreeErrorCode,
    message: string,
  ) {
    super(message);
  }
}

async function repoOf(root: string): Promise<string> {
  const top = await git(root, ['rev-parse', '--show-toplevel']);
  if (!top.ok)
    throw new WorktreeCommandError('not_a_git_repo', `the hall root ${root} is not in a git repository, so it has no run branches`);
  return top.stdout.trim();
}

/**
 * The hall's records, by the run each is named after (the run that made the
 * worktree, whose id its branch ends with). A record that cannot be read
 * still marks its worktree in use; the hall's start reports it.
 */
function recorded(admin: WorktreeAdmin): Map<string, WorktreeRecord | null> {
  return new Map(worktreeRecordFiles(admin.records).map((file) => [recordRun(file), readWorktreeRecord(file, () => undefined)]));
}

/** Every branch the hall made for a run, with the run (and binding) its name holds. */
async function runBranches(repo: string): Promise<{ branch: string; run: string; binding?: string }[]> {
  const refs = await gitOrThrow(repo, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/raider/']);
  return refs.split('\n').flatMap((branch) => {
    const parsed = branch === '' ? null : parseRunBranch(branch);
    return parsed === null ? [] : [{ branch, ...parsed }];
  });
}

/** Every run branch, with its worktree when it has one; oldest run first. */
export async function listWorktrees(admin: WorktreeAdmin): Promise<ListedWorktree[]> {
  const repo = await repoOf(admin.root);
  const worktrees = new Map((await runWorktrees(repo)).map((w) => [w.branch, w]));
  const records = recorded(admin);
  const listed: ListedWorktree[] = [];
  // One at a time: each is a few git commands, and the machine has other work.
  for (const { branch, run, binding } of await runBranches(repo)) {
    const record = records.get(run);
    const owner = record?.worktree.binding ?? binding;
    const shown = await describe(admin, repo, branch, run, worktrees.get(branch));
    listed.push({ ...shown, ...(owner !== undefined ? { binding: owner } : {}), in_use: record !== undefined });
  }
  return listed.sort((a, b) => b.age - a.age || (a.run < b.run ? -1 : 1));
}

async function describe(
  admin: WorktreeAdmin,
  repo: string,
  branch: string,
  run: string,
  worktree: RunWorktreeEntry | undefined,
): Promise<Omit<ListedWorktree, 'binding' | 'in_use'>> {
  const parsed = parseRunId(run);
  const age = parsed === null ? 0 : Math.max(0, Math.round(admin.now / 1000 - parsed.cursor.sec));
  const base = await baseOf(repo, branch);
  const target = mergeTarget(admin, parsed?.slot);
  const from = base ?? (await git(repo, ['merge-base', target, branch])).stdout.trim();
  let changed: string[] = [];
  let uncommitted = false;
  if (worktree !== undefined) {
    // The built-in raider's own files (a binding's session link among them) are no change, as at a run's end.
    const cwd = path.join(worktree.path, path.relative(repo, fs.realpathSync(admin.root)));
    const own = ['.', ...raiderOwnFiles({ path: worktree.path, cwd }).map((file) => `:(exclude,literal)${file}`)];
    // Against the worktree's files: committed changes and the ones left uncommitted alike.
    changed = from === '' ? [] : names(await gitOrThrow(worktree.path, ['diff', '--name-only', '-z', from, '--', ...own]));
    const untracked = names(await gitOrThrow(worktree.path, ['ls-files', '--others', '--exclude-standard', '-z', '--', ...own]));
    changed = [...new Set([...changed, ...untracked])].sort();
    uncommitted = (await gitOrThrow(worktree.path, ['status', '--porcelain', '-z', '--', ...own])) !== '';
  } else if (from !== '') {
    changed = names(await gitOrThrow(repo, ['diff', '--name-only', '-z', from, branch, '--']));
  }
  return {
    run,
    branch,
    ...(base !== undefined ? { base } : {}),
    ...(worktree !== undefined ? { path: worktree.path } : {}),
    changed,
    age,
    size: worktree === undefined ? 0 : await diskUse([worktree.path]),
    merged: !uncommitted && (await isMerged(repo, branch, target)),
    uncommitted,
  };
}

function names(out: string): string[] {
  return out.split('\0').filter((f) => f !== '');
}

/** What a run's branch merges into: its raider's `worktree.base`, else the root's HEAD. */
function mergeTarget(admin: WorktreeAdmin, slot: string | undefined): string {
  const entry = slot === undefined ? undefined : ownEntry(admin.raiders, slotOf(slot).baseName);
  return entry?.worktree?.base ?? 'HEAD';
}

/** The commit the branch was made from: the oldest entry of its reflog (`git worktree add -b` writes it). */
async function baseOf(repo: string, branch: string): Promise<string | undefined> {
  const log = await git(repo, ['reflog', 'show', '--format=%H', `refs/heads/${branch}`, '--']);
  const first = log.ok ? log.stdout.trim().split('\n').at(-1) : undefined;
  return first !== undefined && /^[0-9a-f]{40,64}$/.test(first) ? first : undefined;
}

/**
 * Merged: the target has every commit of the branch, or merging the branch
 * would change nothing (a squash merge, a cherry-pick).
 */
async function isMerged(repo: string, branch: string, target: string): Promise<boolean> {
  if ((await git(repo, ['merge-base', '--is-ancestor', branch, target])).ok) return true;
  const merged = await git(repo, ['merge-tree', '--write-tree', target, branch]);
  if (!merged.ok) return false;
  const tree = await git(repo, ['rev-parse', `${target}^{tree}`]);
  return tree.ok && merged.stdout.trim().split('\n')[0] === tree.stdout.trim();
}

export interface Removed {
  run: string;
  branch: string;
  /** The worktree that was removed, when the run still had one. */
  worktree?: string;
}

/** `worktree rm RUN|BRANCH`: the run's worktree and branch, whatever they hold (the person asked). */
export async function removeWorktree(admin: WorktreeAdmin, target: string): Promise<Removed> {
  const repo = await repoOf(admin.root);
  const { run, branch } = await targetBranch(repo, target);
  const records = recorded(admin);
  if (records.has(run)) throw inUse(run, records.get(run) ?? null);
  const worktree = (await runWorktrees(repo)).find((w) => w.branch === branch);
  const exists = (await git(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).ok;
  if (!exists && worktree === undefined) {
    throw new WorktreeCommandError('worktree_not_found', `no branch ${branch} and no worktree of run ${run}`);
  }
  await removeBoth(repo, branch, worktree);
  return { run, branch, ...(worktree !== undefined ? { worktree: worktree.path } : {}) };
}

/** The run branch a `worktree rm` names: a branch, or a run id (a binding's branch is found by the run that made it). */
async function targetBranch(repo: string, target: string): Promise<{ run: string; branch: string }> {
  const branch = target.includes('/') ? target : runBranch(target);
  const parsed = parseRunBranch(branch);
  if (parsed === null) {
    throw new WorktreeCommandError(
      'not_our_branch',
      `${target} is not a branch the hall made for a run (raider/RUN_ID or raider/BINDING/RUN_ID); remove it with git itself if you mean to`,
    );
  }
  if (target.includes('/')) return { run: parsed.run, branch };
  const found = (await runBranches(repo)).find((b) => b.run === target);
  return { run: target, branch: found?.branch ?? branch };
}

function inUse(run: string, record: WorktreeRecord | null): WorktreeCommandError {
  const binding = record?.worktree.binding;
  return new WorktreeCommandError(
    'worktree_in_use',
    binding !== undefined
      ? `binding ${binding} goes on in the worktree of run ${run}; after 'raider hall session reset ${binding}' its next run (or the hall's next start) settles it, then it can go`
      : `the worktree of run ${run} is in use: a run is starting or working in it, or the hall is making or removing it (a hall that was killed leaves it to its next start); cancel the run first`,
  );
}

async function removeBoth(repo: string, branch: string, worktree: RunWorktreeEntry | undefined): Promise<void> {
  await serialised(repo, async () => {
    // Twice forced: a worktree locked by git is removed too (the person asked, or it is merged or old).
    if (worktree !== undefined) await gitOrThrow(repo, ['worktree', 'remove', '--force', '--force', worktree.path]);
    // A worktree removed by hand leaves git's record of it, which holds its branch.
    else await gitOrThrow(repo, ['worktree', 'prune']);
    const exists = (await git(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).ok;
    if (exists) await gitOrThrow(repo, ['branch', '-D', '--quiet', branch]);
  });
}

export interface Pruned extends Removed {
  reason: PruneReason;
}

export interface PruneResult {
  pruned: Pruned[];
  /** Merged or old, but its worktree holds changes nobody committed: kept, never thrown away. */
  uncommitted: Removed[];
}

/**
 * `worktree prune`: git's records of worktrees gone from disk, then every
 * run branch merged into its base or older than `max_age`, with its
 * worktree. A worktree in use, or with uncommitted changes, stays.
 */
export async function pruneWorktrees(admin: WorktreeAdmin): Promise<PruneResult> {
  const repo = await repoOf(admin.root);
  await serialised(repo, () => gitOrThrow(repo, ['worktree', 'prune']));
  const result: PruneResult = { pruned: [], uncommitted: [] };
  const worktrees = new Map((await runWorktrees(repo)).map((w) => [w.branch, w]));
  for (const listed of await listWorktrees(admin)) {
    const reason = pruneReason(listed, admin.maxAge);
    if (reason === null) continue;
    const left = { run: listed.run, branch: listed.branch, ...(listed.path !== undefined ? { worktree: listed.path } : {}) };
    if (listed.uncommitted) {
      result.uncommitted.push(left);
      continue;
    }
    // Asked again at the last moment: the hall may have taken it up since the list.
    if (recorded(admin).has(listed.run)) continue;
    await removeBoth(repo, listed.branch, worktrees.get(listed.branch));
    result.pruned.push({ ...left, reason });
  }
  return result;
}

type WorktreeCommand = 'worktree_list' | 'worktree_rm' | 'worktree_prune';

/** The `worktree_*` commands over a fresh view of the hall each time (its clock, its records). */
export function worktreeHandlers(admin: () => WorktreeAdmin): Pick<CommandHandlers, WorktreeCommand> {
  return {
    worktree_list: () => refused(async () => ({ worktrees: await listWorktrees(admin()) })),
    worktree_rm: (p) => refused(async () => ({ removed: 1 as const, ...(await removeWorktree(admin(), p.target)) })),
    worktree_prune: () => refused(() => pruneWorktrees(admin())),
  };
}

/** A refusal the person can act on is a reply with its code; anything else fails the command as usual. */
async function refused<T>(answer: () => Promise<T>): Promise<T | ErrorReply> {
  try {
    return await answer();
  } catch (err) {
    if (err instanceof WorktreeCommandError) return { error: err.message, code: err.code };
    throw err;
  }
}

/** A file of a run's change: lines added and removed (null for a binary file). */
export interface DiffStatFile {
  file: string;
  added: number | null;
  removed: number | null;
}

/** What a run's branch holds against its base, as `git diff --stat base...branch` counts it. */
export interface BranchDiff {
  branch: string;
  base: string;
  files: DiffStatFile[];
  /** git's own line: ` 2 files changed, 3 insertions(+), 1 deletion(-)`; empty when nothing changed. */
  summary: string;
}

/**
 * The run's branch against its base; null when the root is in no repository
 * or the branch is gone. `named` is the branch its `raider.done` named (a
 * binding's later run works on the branch of the run that made it); without
 * it, the branch made by this run, plain or a binding's.
 */
export async function runBranchDiff(root: string, runId: string, named?: string): Promise<BranchDiff | null> {
  const top = await git(root, ['rev-parse', '--show-toplevel']);
  if (!top.ok) return null;
  const repo = top.stdout.trim();
  const branch = named !== undefined ? named : ((await runBranches(repo)).find((b) => b.run === runId)?.branch ?? runBranch(runId));
  if (parseRunBranch(branch) === null) return null;
  if (!(await git(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).ok) return null;
  const base = (await baseOf(repo, branch)) ?? (await git(repo, ['merge-base', 'HEAD', branch])).stdout.trim();
  if (base === '') return null;
  const range = `${base}...${branch}`;
  const numstat = await gitOrThrow(repo, ['diff', '--no-renames', '--numstat', '-z', range, '--']);
  const files = names(numstat).map((entry): DiffStatFile => {
    const [added = '-', removed = '-', file = ''] = entry.split('\t');
    return { file, added: added === '-' ? null : Number(added), removed: removed === '-' ? null : Number(removed) };
  });
  const summary = (await gitOrThrow(repo, ['diff', '--no-renames', '--shortstat', range, '--'])).trim();
  return { branch, base, files, summary };
}
