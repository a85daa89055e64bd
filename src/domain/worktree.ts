/**
 * A run in a git worktree of its own (docs/worktrees.md): the settings of a
 * raider entry's `worktree` key, and what a run's worktree was and left.
 */

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
