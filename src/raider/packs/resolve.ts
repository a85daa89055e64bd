/**
 * Packs: instruction files added to the system prompt, in the order given
 * (the hall passes the persona last). A pack NAME is looked up as
 *   1. <root>/.raider/packs/NAME.md   (the project's own)
 *   2. ~/.raider/packs/NAME.md        (the user's)
 *   3. a built-in persona (builtin.ts)
 * An unknown pack is a configuration error (exit 3) that lists where it
 * was looked for.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, errorMessage } from '../errors.js';
import { BUILTIN_PACKS } from './builtin.js';
import { errorCode } from '../../domain/error-message.js';

export interface Pack {
  name: string;
  /** The file it came from, or `built-in`. */
  source: string;
  text: string;
}

/** A pack name is a file name, never a path. */
const PACK_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function packDirs(root: string, home: string): string[] {
  return [join(root, '.raider', 'packs'), join(home, '.raider', 'packs')];
}

export function resolvePacks(names: readonly string[], root: string, home: string): Pack[] {
  const seen = new Set<string>();
  const packs: Pack[] = [];
  for (const name of names) {
    if (seen.has(name)) continue; // the same instructions twice add nothing
    seen.add(name);
    packs.push(resolvePack(name, root, home));
  }
  return packs;
}

function resolvePack(name: string, root: string, home: string): Pack {
  if (!PACK_NAME_RE.test(name) || name.includes('..')) {
    throw new ConfigError(`pack '${name}': a pack name is a file name (letters, digits, _ . -), not a path`);
  }
  const dirs = packDirs(root, home);
  for (const dir of dirs) {
    const file = join(dir, `${name}.md`);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if (errorCode(err) === 'ENOENT') continue;
      throw new ConfigError(`pack '${name}': cannot read ${file}: ${errorMessage(err)}`);
    }
    return { name, source: file, text: text.trim() };
  }
  const builtin = BUILTIN_PACKS[name];
  if (builtin !== undefined) return { name, source: 'built-in', text: builtin };
  throw new ConfigError(
    `unknown pack '${name}': no ${dirs.map((d) => join(d, `${name}.md`)).join(' or ')}, ` +
      `and no built-in persona of that name (built-in: ${Object.keys(BUILTIN_PACKS).join(', ')})`,
  );
}
