/**
 * Where `raider hall start` finds the daemon's code: the bundle that
 * `npm run build` makes of it (scripts/bundle-cli.ts: dist/daemon/, a few
 * ES module chunks instead of a hundred files and their packages, which
 * takes a third off the CPU of a hall's start), unless it is missing or
 * older than a module in it (a `tsc` without the bundling); then dist/ as it
 * is (or src/, run through tsx).
 *
 * It sits in src/cli/ beside the CLI's bundle (dist/cli/hall.bundle.cjs),
 * so that its import.meta.url is right in that bundle and out of it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

type Daemon = typeof import('./hall/daemon.js');

const BUNDLE_DIR = fileURLToPath(new URL('../daemon/', import.meta.url));

/**
 * True when `dir` holds the bundle's entry (daemon.js) and the list of the
 * modules it was made of (inputs.json, paths relative to `dir`), and none of
 * them is newer than the entry.
 */
export function freshBundle(dir: string): boolean {
  try {
    const builtAt = fs.statSync(path.join(dir, 'daemon.js')).mtimeMs;
    const inputs: unknown = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
    if (!Array.isArray(inputs)) return false;
    return inputs.every((input) => typeof input === 'string' && fs.statSync(path.join(dir, input)).mtimeMs <= builtAt);
  } catch {
    return false;
  }
}

export async function loadDaemon(): Promise<Daemon> {
  if (!freshBundle(BUNDLE_DIR)) return import('./hall/daemon.js');
  const daemon: Daemon = await import(path.join(BUNDLE_DIR, 'daemon.js'));
  return daemon;
}
