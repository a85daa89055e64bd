/**
 * The ES module bundles that `npm run build` makes of code that loads many
 * modules (scripts/bundle-cli.ts): a directory with the bundle's entry, its
 * chunks, and `inputs.json`, the modules of dist/ it was made of (paths
 * relative to the directory). A bundle is used only while none of those is
 * newer than its entry (a `tsc` without the bundling leaves it behind).
 */
import fs from 'node:fs';
import path from 'node:path';

/** True when `dir` holds `entry` and its list of inputs, and no input is newer than the entry. */
export function freshBundle(dir: string, entry: string): boolean {
  try {
    const builtAt = fs.statSync(path.join(dir, entry)).mtimeMs;
    const inputs: unknown = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
    if (!Array.isArray(inputs)) return false;
    return inputs.every((input) => typeof input === 'string' && fs.statSync(path.join(dir, input)).mtimeMs <= builtAt);
  } catch {
    return false;
  }
}

/**
 * The module `entry` of the bundle in `dir` while it is fresh; else what
 * `fallback` imports (the same module from dist/, or src/ under tsx). The
 * bundle's module is typed as the fallback's: it is the same code, bundled.
 */
export async function importBundled<T>(dir: string, entry: string, fallback: () => Promise<T>): Promise<T> {
  if (!freshBundle(dir, entry)) return fallback();
  const bundled: T = await import(path.join(dir, entry));
  return bundled;
}
