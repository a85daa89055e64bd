/**
 * Which raider executable the hall starts: RAIDER_HALL_RAIDER_BIN when it is
 * executable, else this package's own `raider`, else `raider` on PATH.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RaiderCommand } from './run-environment.js';

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export function resolveRaiderCommand(env: Readonly<Record<string, string | undefined>>): RaiderCommand {
  const fromEnv = env.RAIDER_HALL_RAIDER_BIN;
  if (fromEnv && executable(fromEnv)) return { command: path.resolve(fromEnv), prefixArgs: [] };
  const own = fileURLToPath(new URL('../../bin/raider', import.meta.url));
  // Our own raider is a Node script: start it with this Node, skipping the `env node` lookup.
  if (fs.existsSync(own)) return { command: process.execPath, prefixArgs: [own] };
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir !== '' && executable(path.join(dir, 'raider'))) return { command: path.join(dir, 'raider'), prefixArgs: [] };
  }
  throw new Error("Cannot find 'raider' binary (set RAIDER_HALL_RAIDER_BIN or put it in $PATH)");
}
