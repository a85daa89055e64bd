/**
 * What a starting hall does with the git worktrees it made (docs/worktrees.md):
 * each one its records name that no live run and no binding goes on in is
 * finished: one a killed hall was making or removing goes, a whole one is
 * settled as at a run's end (its change committed to its branch, never
 * lost); then git's own records of worktrees gone are pruned. Only worktrees
 * the hall recorded are touched: never a branch or directory it did not make.
 */
import { pruneWorktrees, reconcileWorktree } from '../adapters/os/git-worktree.js';
import { BindingWorktrees } from '../adapters/storage/binding-worktrees.js';
import { readWorktreeRecord, worktreeRecordFiles } from '../adapters/storage/worktree-records.js';
import { errorMessage } from '../domain/error-message.js';
import type { HallConfig } from '../ports/hall-config.js';
import { type HallPaths, worktreeRecordsDir } from '../ports/hall-paths.js';
import type { HallStateStore } from '../ports/state-store.js';

export async function reconcileWorktrees(
  paths: HallPaths,
  config: HallConfig,
  store: HallStateStore,
  /** The worktrees of the runs the hall adopted: they live on. */
  live: ReadonlySet<string>,
  log: (line: string) => void,
): Promise<void> {
  const dir = worktreeRecordsDir(paths);
  const repos = new Set<string>();
  if (Object.values(config.raiders).some((entry) => entry.worktree !== undefined)) repos.add(paths.root);
  const bindings = new BindingWorktrees(store);
  for (const file of worktreeRecordFiles(dir)) {
    const record = readWorktreeRecord(file, log);
    if (record === null) continue;
    const wt = { ...record.worktree, record: file };
    repos.add(wt.repo);
    if (live.has(wt.path)) continue;
    if (wt.binding !== undefined) {
      const current = bindings.get(wt.binding);
      const ours = current?.worktree.path === wt.path;
      if (ours && record.state === 'made' && store.state.sessions.get(wt.binding) === current?.session) continue;
      if (ours) bindings.unset(wt.binding);
    }
    try {
      await reconcileWorktree({ state: record.state, worktree: wt });
    } catch (err) {
      log(`the worktree ${wt.path} (branch ${wt.branch}) was left as it is: ${errorMessage(err)}`);
    }
  }
  for (const repo of repos) await pruneWorktrees(repo);
}
