/**
 * Keeps file tools inside --root. A path is checked lexically and, when it
 * exists, again after resolving symlinks, so neither `../x` nor a symlink
 * pointing out of the project lets a tool read outside it.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { ToolError } from './tool.js';

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The absolute path for `p` (relative to root), or a ToolError when it leaves the root. */
export async function confinedPath(root: string, p: string): Promise<string> {
  const abs = resolve(root, p);
  if (!inside(root, abs)) throw new ToolError(`path '${p}' is outside the project root`);
  let real: string;
  try {
    real = await realpath(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return abs;
    throw err;
  }
  const realRoot = await realpath(root);
  if (!inside(realRoot, real)) throw new ToolError(`path '${p}' is outside the project root`);
  return real;
}
