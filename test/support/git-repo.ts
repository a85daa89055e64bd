/**
 * A real git repository for the worktree tests (docs/worktrees.md): git run
 * as a child process, and a root with one commit, as a project has.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempRoot } from './hall-client.js';

/** A committer for the tests' own commits (the machine may name none). */
export const IDENTITY = ['-c', 'user.name=Test', '-c', 'user.email=test@example.com'];

export function git(cwd: string, ...args: string[]): string {
  // --no-optional-locks: looking must not refresh the root's index, which tests compare byte for byte.
  return execFileSync('git', ['--no-optional-locks', '-C', cwd, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `dir` becomes a repository on `trunk` with one commit: README.md and a .gitignore for the hall's own files. */
export function commitProject(dir: string, readme = 'a project\n'): string {
  git(dir, 'init', '--quiet', '--initial-branch=trunk');
  fs.writeFileSync(path.join(dir, '.gitignore'), '.raider-hall*\n.raider/\n');
  fs.writeFileSync(path.join(dir, 'README.md'), readme);
  git(dir, 'add', '.');
  git(dir, ...IDENTITY, 'commit', '--quiet', '-m', 'first');
  return git(dir, 'rev-parse', 'HEAD').trim();
}

/** A new temporary root holding such a repository. */
export function repoRoot(): string {
  const root = tempRoot();
  commitProject(root);
  return root;
}
