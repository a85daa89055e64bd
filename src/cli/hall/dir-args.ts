/**
 * The optional hall directory in front of the positional arguments
 * (reference §1.2): for commands that take only DIR it must be a directory;
 * for commands with more arguments it is DIR only when it is a directory
 * that looks like a hall and more arguments than needed were given.
 */
import fs from 'node:fs';
import path from 'node:path';

export class UsageError extends Error {}
export class NotADirectoryError extends Error {}

function isDir(p: string): boolean {
  return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

function looksLikeHall(p: string): boolean {
  return fs.existsSync(path.join(p, '.raider-hall.yml')) || fs.existsSync(path.join(p, '.raider-hall.socket'));
}

/** For start, stop, status, ps, install: the only positional is DIR. */
export function onlyDir(positionals: readonly string[], cwd: string = process.cwd()): string {
  const first = positionals[0];
  if (first === undefined || first.startsWith('-')) return path.resolve(cwd);
  if (!isDir(path.resolve(cwd, first))) throw new NotADirectoryError(`Not a directory: ${first}`);
  return path.resolve(cwd, first);
}

/** For commands that need `needed` arguments after the optional DIR. */
export function dirThen(positionals: readonly string[], needed: number, cwd: string = process.cwd()): { dir: string; rest: string[] } {
  const [first, ...others] = positionals;
  if (first !== undefined && positionals.length > needed) {
    const candidate = path.resolve(cwd, first);
    if (isDir(candidate) && looksLikeHall(candidate)) return { dir: candidate, rest: others };
  }
  return { dir: path.resolve(cwd), rest: [...positionals] };
}
