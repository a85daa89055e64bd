/**
 * A run in a git worktree of its own (docs/worktrees.md): the settings of a
 * raider entry's `worktree` key, and what a run's worktree was and left.
 */
import { parseRunId } from './run-id.js';

/** What a run's worktree keeps once the run ends: only a branch with changes, or the worktree too. */
export type WorktreeKeep = 'changed' | 'always';

export interface WorktreeSettings {
  /** The commit (or branch, tag) new branches start from; none = the root's HEAD commit. */
  base?: string;
  /** Files of the root copied into each worktree (untracked ones such as `.env`), relative to the root. */
  copy: string[];
  keep: WorktreeKeep;
  /** Where the worktrees go, relative to the hall root; none = `.raider-hall/worktrees`. */
  dir?: string;
}

export const DEFAULT_WORKTREES_DIR = '.raider-hall/worktrees';

/** A run's worktree while the run lives. */
export interface RunWorktree {
  /** The repository's top level: where git commands about the worktree run. */
  repo: string;
  /** The worktree's top level. */
  path: string;
  /** The run's directory inside it (the hall root's place in the repository). */
  cwd: string;
  branch: string;
  /** The base commit, in full. */
  base: string;
  /** The copied files: never part of the run's change, but a run that edits one keeps its worktree. */
  copied: CopiedFile[];
  keep: WorktreeKeep;
  /**
   * The hall's record that it made this worktree (written before git made it,
   * removed once it is settled): what a starting hall reconciles.
   */
  record?: string;
  /** The binding whose runs go on in it, one after another (numbered slot, chat, cron job, editor session). */
  binding?: string;
  /** The commit the current run started from (a binding's later run); none = `base`. */
  start?: string;
}

export interface CopiedFile {
  /** Where it came from, in the hall root. */
  source: string;
  /** Where it is, relative to the worktree's top. */
  file: string;
}

/** What a run's worktree left, as `raider.done` reports it. */
export interface WorktreeResult {
  /** The worktree's path (it may be gone: see `kept`). */
  worktree: string;
  /** The run's branch; it no longer exists when `changed` and `commits` are empty. */
  branch: string;
  base: string;
  /** Commits the raider made on the branch (the hall's work-in-progress commit not counted). */
  commits: number;
  /** Files changed against the base, committed or not. */
  changed: string[];
  /** True when the hall committed changes the raider left uncommitted. */
  wip: boolean;
  /** True when the worktree is still on disk (`keep: always`, a commit that failed, a copied file the run changed). */
  kept: boolean;
}

/** The branch of a run: `raider/RUN_ID`. */
export function runBranch(runId: string): string {
  return `raider/${runId}`;
}

/**
 * The branch of a binding's worktree: `raider/BINDING/RUN_ID`, the binding
 * with anything but letters, digits, `_` and `-` made a `-` (git's rules for
 * branch names), and the run that started it (a `session reset` starts anew).
 */
export function bindingBranch(binding: string, runId: string): string {
  return `raider/${binding.replace(/[^A-Za-z0-9_-]+/g, '-')}/${runId}`;
}

/** A `copy` entry names a file inside the root: relative, without `..` steps. */
export function isInsidePath(rel: string): boolean {
  if (rel === '' || rel.startsWith('/')) return false;
  return rel.split(/[\\/]+/).every((part) => part !== '..' && part !== '');
}

/** A branch the hall made for a run: `raider/RUN_ID`, or a binding's `raider/BINDING/RUN_ID` (see `bindingBranch`). */
export interface RunBranchName {
  /** The run that made the branch (for a binding's, its first run on it). */
  run: string;
  /** The binding as its branch spells it, for a binding's branch. */
  binding?: string;
}

/** Reads a branch the hall made back; null for a branch it did not make. */
export function parseRunBranch(branch: string): RunBranchName | null {
  const m = /^raider\/(?:([A-Za-z0-9_-]+)\/)?([^/]+)$/.exec(branch);
  const run = m?.[2];
  if (m === null || run === undefined || parseRunId(run) === null) return null;
  return m[1] === undefined ? { run } : { run, binding: m[1] };
}

/** A run's branch (and worktree, while it has one) as `raider hall worktree list` shows it. */
export interface ListedWorktree {
  run: string;
  branch: string;
  /** The commit the branch started from (the first entry of its reflog), when git still knows it. */
  base?: string;
  /** The worktree's top, while it is on disk. */
  path?: string;
  /** Files changed against the base, committed or not. */
  changed: string[];
  /** Seconds since the run started. */
  age: number;
  /** Bytes the worktree takes on disk; 0 when only the branch is left. */
  size: number;
  /** True when the worktree holds changes nobody committed (they would be lost with it). */
  uncommitted: boolean;
  /** True when the branch is merged into what its raider's runs start from (`base`, else the root's HEAD). */
  merged: boolean;
  /** The binding whose runs go on in it (its record's; else as its branch spells it). */
  binding?: string;
  /**
   * True while the hall's record of it is there (docs/worktrees.md): a run
   * is starting or works in it, a binding goes on in it, or the hall is
   * making or removing it. It cannot be removed.
   */
  in_use: boolean;
}

/** Why `worktree prune` removes a run's branch (and worktree); null: it stays. */
export type PruneReason = 'merged' | 'max_age';

export function pruneReason(w: ListedWorktree, maxAgeSeconds: number | null): PruneReason | null {
  if (w.in_use) return null;
  if (w.merged) return 'merged';
  if (maxAgeSeconds !== null && w.age > maxAgeSeconds) return 'max_age';
  return null;
}

/** Bytes as a person reads them: 512 B, 3.4 KiB, 12 MiB, 1.2 GiB. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = bytes;
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) {
    n /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${n} B` : `${n < 10 ? n.toFixed(1) : Math.round(n)} ${units[unit]}`;
}

/** The refusal of a run whose worktree would take the worktrees past `worktree.max_disk`. */
export function diskCapProblem(cap: number, used: number, needed: number): string | null {
  if (used + needed <= cap) return null;
  return `the worktrees take ${formatBytes(used)} on disk and a new one needs about ${formatBytes(needed)}, over worktree.max_disk (${formatBytes(cap)}); remove merged and old ones with 'raider hall worktree prune' (or 'raider hall worktree rm RUN'), or raise the cap`;
}
