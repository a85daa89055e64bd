/**
 * Reading the hall's records of the git worktrees it made (docs/worktrees.md;
 * src/adapters/os/git-worktree.ts writes them, one `RUN_ID.json` per
 * worktree, before git makes it, and removes it once the worktree is
 * settled): what a starting hall reconciles, and what `raider hall worktree
 * rm` and `prune` leave alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { WorktreeRecord } from '../os/git-worktree.js';
import { errorCode, errorMessage } from '../../domain/error-message.js';
import { runWorktreeSchema } from './persisted-schemas.js';

const recordSchema = z.object({
  state: z.enum(['creating', 'made', 'removing']),
  worktree: runWorktreeSchema,
}) satisfies z.ZodType<WorktreeRecord>;

/** The record files of the directory, each named after the run whose worktree it is; none when there is no directory. */
export function worktreeRecordFiles(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .map((name) => path.join(dir, name));
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return [];
    throw err;
  }
}

/** The run a record file is named after: the run that made the worktree. */
export function recordRun(file: string): string {
  return path.basename(file, '.json');
}

/** A record that cannot be read is reported and its worktree left alone: never guess about a change. */
export function readWorktreeRecord(file: string, log: (line: string) => void): WorktreeRecord | null {
  try {
    const parsed = recordSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    if (parsed.success) return parsed.data;
    log(`${file}: not a worktree record (${z.prettifyError(parsed.error)}); its worktree is left as it is`);
  } catch (err) {
    log(`${file}: cannot read (${errorMessage(err)}); its worktree is left as it is`);
  }
  return null;
}
