/**
 * Keeps file tools inside --root. A path is checked lexically and again
 * after resolving symlinks — of the path itself when it exists, else of
 * its nearest existing ancestor (a file about to be written) — so neither
 * `../x` nor a symlink pointing out of the project lets a tool read or
 * write outside it.
 */
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { ToolError } from './tool.js';
import { errorCode } from '../../domain/error-message.js';

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The realpath of `abs`, or of its nearest existing ancestor plus the rest. */
async function realOrNearest(abs: string): Promise<string> {
  let missing = '';
  let at = abs;
  for (;;) {
    try {
      const real = await realpath(at);
      return missing ? resolve(real, missing) : real;
    } catch (err) {
      if (errorCode(err) !== 'ENOENT' || dirname(at) === at) throw err;
      missing = missing ? `${at.slice(dirname(at).length + 1)}/${missing}` : at.slice(dirname(at).length + 1);
      at = dirname(at);
    }
  }
}

/** The absolute path for `p` (relative to root), or a ToolError when it leaves the root. */
export async function confinedPath(root: string, p: string): Promise<string> {
  const abs = resolve(root, p);
  if (!inside(root, abs)) throw new ToolError(`path '${p}' is outside the project root`);
  const real = await realOrNearest(abs);
  const realRoot = await realpath(root);
  if (!inside(realRoot, real)) throw new ToolError(`path '${p}' is outside the project root`);
  return real;
}
