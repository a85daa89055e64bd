/**
 * Bundles the `raider hall ...` command into one CommonJS file,
 * `dist/cli/hall.bundle.cjs`, run by `bin/raider` (part of `npm run build`,
 * after `tsc`).
 *
 * Why: a client command (`status`, `ps`, `spawn`, ...) is a short process
 * whose time is mostly Node loading modules. From dist/ it loads a dozen ESM
 * files through the ESM loader plus commander's six CommonJS files; as one
 * CommonJS file it skips the ESM loader and the package lookups
 * (`bench/cli-status.ts` has the figures).
 *
 * What stays outside: every `import()` of our own modules (the daemon, config
 * edits, inspect, MCP) is left as a runtime import of its dist/ file, so the
 * bundle holds only what every `raider hall` call needs.
 *
 *   node --import tsx scripts/bundle-cli.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = path.join(REPO, 'dist', 'cli', 'hall', 'hall-command.js');
export const HALL_BUNDLE = path.join(REPO, 'dist', 'cli', 'hall.bundle.cjs');

const hallCliPlugin: Plugin = {
  name: 'raider-hall-cli',
  setup(b) {
    // Lazy parts stay lazy: a dynamic import of our own module is kept, relative to the bundle.
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      const target = path.resolve(args.resolveDir, args.path);
      let relative = path.relative(path.dirname(HALL_BUNDLE), target).split(path.sep).join('/');
      if (!relative.startsWith('.')) relative = `./${relative}`;
      return { path: relative, external: true };
    });
    // commonjs-libraries reaches CommonJS packages through createRequire so that
    // the ESM loader does not lex them; in a CommonJS bundle plain requires do,
    // and esbuild can follow them into the bundle.
    b.onLoad({ filter: /[\\/]dist[\\/]cli[\\/]commonjs-libraries\.js$/ }, () => ({
      loader: 'js',
      resolveDir: path.dirname(ENTRY),
      contents: [
        "const commander = require('commander');",
        'export const { Command, CommanderError, Option } = commander;',
        "export function stableStringify() { return require('safe-stable-stringify'); }",
        "export function picocolors() { return require('picocolors'); }",
      ].join('\n'),
    }));
  },
};

export async function bundleHallCli(): Promise<void> {
  const result = await build({
    entryPoints: [ENTRY],
    outfile: HALL_BUNDLE,
    write: false,
    metafile: true,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'linked',
    plugins: [hallCliPlugin],
    logLevel: 'warning',
    // import.meta is empty in CommonJS: a module of the bundle that reads it would break at run time.
    logOverride: { 'empty-import-meta': 'error' },
  });
  // Our modules in the bundle, for bin/raider to see that a `tsc` alone left it behind.
  const inputs = Object.keys(result.metafile.inputs)
    .map((input) => path.resolve(input))
    .filter((file) => file.startsWith(path.join(REPO, 'dist') + path.sep))
    .map((file) => path.relative(path.dirname(HALL_BUNDLE), file).split(path.sep).join('/'));
  for (const file of result.outputFiles) {
    const text =
      file.path === HALL_BUNDLE
        ? file.text.replace(/^\/\/# sourceMappingURL=/m, `module.exports.bundleInputs = ${JSON.stringify(inputs)};\n$&`)
        : file.text;
    fs.writeFileSync(file.path, text);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleHallCli();
}
