/**
 * Where the built-in raider finds its model engines (the AI SDK and its
 * providers): the bundle that `npm run build` makes of them
 * (dist/raider/engines-bundle/, a few ES module chunks instead of the
 * packages' many files: ~0.2 s less CPU at each run's start), unless it is
 * missing or stale (see esm-bundle.ts); then dist/ as it is.
 *
 * It sits in src/raider/ beside the raider's bundle
 * (dist/raider/raider.bundle.cjs), so that its import.meta.url is right in
 * that bundle and out of it.
 */
import { fileURLToPath } from 'node:url';
import { importBundled } from '../os/esm-bundle.js';

const BUNDLE_DIR = fileURLToPath(new URL('./engines-bundle/', import.meta.url));

export function loadModelEngine(): Promise<typeof import('./engines/model-engine.js')> {
  return importBundled(BUNDLE_DIR, 'model-engine.js', () => import('./engines/model-engine.js'));
}
