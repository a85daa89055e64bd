/**
 * The optional hall directory in front of the positional arguments. For
 * commands that take only DIR it must be a directory. For commands with more
 * arguments, a first one that is a path is DIR: one with a `/` (no raider
 * name, run id or mission id has one) followed by more arguments, or an
 * existing directory followed by more arguments than the command needs. An
 * explicit DIR without a hall is an error naming it, never a name sent to
 * the hall of the current directory.
 */
import fs from 'node:fs';
import path from 'node:path';

/** A mistake in how the command was called: its message on stderr, exit 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
}
export class NotADirectoryError extends UsageError {}

/** An explicit DIR where no hall is: exit 1, as a hall that does not answer. */
export class NoHallError extends Error {
  readonly exitCode = 1;
}

/**
 * The exit code an error asks for. By shape, not class: `raider hall` runs
 * from a bundle (scripts/bundle-cli.ts) and the modules it loads lazily
 * beside it throw their own copy of UsageError.
 */
export function exitCodeOf(err: unknown): number | undefined {
  const code = (err as { exitCode?: unknown } | null)?.exitCode;
  return typeof code === 'number' && Number.isInteger(code) && code > 0 ? code : undefined;
}

function isDir(p: string): boolean {
  return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

function looksLikeHall(p: string): boolean {
  return fs.existsSync(path.join(p, '.raider-hall.yml')) || fs.existsSync(path.join(p, '.raider-hall.socket'));
}

/**
 * The hall of a command given no DIR: the nearest directory from `cwd`
 * upward that looks like a hall (as git finds its repository), else `cwd`.
 * A root that is not `cwd` is named on stderr, so that stdout stays the
 * command's own (`--json`).
 */
export function defaultRoot(
  cwd: string = process.cwd(),
  note: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): string {
  const start = path.resolve(cwd);
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (looksLikeHall(dir)) {
      if (dir !== start) note(`Using the hall in ${dir}`);
      return dir;
    }
    if (path.dirname(dir) === dir) return start;
  }
}

/** For start, stop, status, ps, install: the only positional is DIR. */
export function onlyDir(positionals: readonly string[], cwd: string = process.cwd()): string {
  const first = positionals[0];
  if (first === undefined || first.startsWith('-')) return defaultRoot(cwd);
  if (!isDir(path.resolve(cwd, first))) throw new NotADirectoryError(`Not a directory: ${first}`);
  return path.resolve(cwd, first);
}

/** A word written as a path: with a `/`, or `.` / `..`; no raider name, run id or mission id looks so. */
export function isPathWord(word: string): boolean {
  return word.includes('/') || word === '.' || word === '..';
}

/** The hall directory an explicit DIR names; a DIR with no hall in it is refused by name. */
export function explicitHall(word: string, cwd: string = process.cwd()): string {
  const dir = path.resolve(cwd, word);
  if (!isDir(dir)) throw new NoHallError(`No hall in ${word}: it is not a directory`);
  if (!looksLikeHall(dir)) throw new NoHallError(`No hall in ${word}: it has neither .raider-hall.yml nor a hall socket`);
  return dir;
}

/** For commands that need `needed` arguments after the optional DIR. */
export function dirThen(positionals: readonly string[], needed: number, cwd: string = process.cwd()): { dir: string; rest: string[] } {
  const [first, ...others] = positionals;
  if (first !== undefined && others.length > 0) {
    const explicit = isPathWord(first) || (positionals.length > needed && isDir(path.resolve(cwd, first)));
    if (explicit) return { dir: explicitHall(first, cwd), rest: others };
  }
  return { dir: defaultRoot(cwd), rest: [...positionals] };
}
