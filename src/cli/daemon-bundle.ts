/**
 * Where `raider hall start` finds the daemon's code: the bundle that
 * `npm run build` makes of it (dist/daemon/, a few ES module chunks instead
 * of a hundred files and their packages, which takes a third off the CPU of
 * a hall's start), unless it is missing or stale (see esm-bundle.ts); then
 * dist/ as it is (or src/, run through tsx).
 *
 * It sits in src/cli/ beside the CLI's bundle (dist/cli/hall.bundle.cjs),
 * so that its import.meta.url is right in that bundle and out of it.
 */
import { fileURLToPath } from 'node:url';
import { importBundled } from '../os/esm-bundle.js';

const BUNDLE_DIR = fileURLToPath(new URL('../daemon/', import.meta.url));

export function loadDaemon(): Promise<typeof import('./hall/daemon.js')> {
  return importBundled(BUNDLE_DIR, 'daemon.js', () => import('./hall/daemon.js'));
}
