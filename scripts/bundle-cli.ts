/**
 * Bundles the two short-lived commands into one CommonJS file each (part of
 * `npm run build`, after `tsc`), run by `bin/raider`:
 *
 *   dist/cli/hall.bundle.cjs       `raider hall ...` (hallCommand)
 *   dist/raider/raider.bundle.cjs  the built-in raider, `raider -- MISSION` (runRaiderCli)
 *   dist/acp-raider/acp-raider.bundle.cjs  the ACP bridge, `raider acp-client` (runAcpRaider)
 *   dist/raider/acp-agent.bundle.cjs  the built-in raider over ACP, `raider acp-agent` (runRaiderAcpAgent)
 *
 * Why: a client command (`status`, `ps`, `spawn`, ...), a run of the
 * built-in raider and one of the ACP bridge are short processes whose time is mostly Node loading
 * modules. From dist/ they load dozens of ESM files through the ESM loader;
 * as one CommonJS file they skip the ESM loader and the package lookups
 * (`bench/cli-status.ts` has the figures).
 *
 * What stays outside: every `import()` of our own modules (the daemon, config
 * edits, inspect, MCP, the AI SDK engines) is left as a runtime import of its
 * dist/ file, so a bundle holds only what every call needs.
 *
 * Two more, as ES module chunks (see bundleEsm): the daemon (dist/daemon/,
 * loaded by `raider hall start` through src/cli/daemon-bundle.ts) and the
 * built-in raider's model engines (dist/raider/engines-bundle/, through
 * src/raider/model-engine-bundle.ts).
 *
 *   node --import tsx scripts/bundle-cli.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const DIST = path.join(REPO, 'dist');

interface BundleSpec {
  entry: string;
  outfile: string;
  /** Minified, and zod without its translations (zodEnglishOnly): for a process started per run, whose memory counts per run. */
  lean?: boolean;
}

export const HALL_BUNDLE: BundleSpec = {
  entry: path.join(DIST, 'cli', 'hall', 'hall-command.js'),
  outfile: path.join(DIST, 'cli', 'hall.bundle.cjs'),
};
export const RAIDER_BUNDLE: BundleSpec = {
  entry: path.join(DIST, 'raider', 'cli.js'),
  outfile: path.join(DIST, 'raider', 'raider.bundle.cjs'),
};
export const ACP_AGENT_BUNDLE: BundleSpec = {
  entry: path.join(DIST, 'raider', 'acp-agent.js'),
  outfile: path.join(DIST, 'raider', 'acp-agent.bundle.cjs'),
};
export const ACP_RAIDER_BUNDLE: BundleSpec = {
  entry: path.join(DIST, 'acp-raider', 'acp-raider.js'),
  outfile: path.join(DIST, 'acp-raider', 'acp-raider.bundle.cjs'),
  lean: true,
};

/** `target` as a relative import from the directory `dir` (always starting with `.`). */
function relativeFrom(dir: string, target: string): string {
  const relative = path.relative(dir, target).split(path.sep).join('/');
  return relative.startsWith('.') ? relative : `./${relative}`;
}

function relativeToBundle(outfile: string, target: string): string {
  return relativeFrom(path.dirname(outfile), target);
}

/** Our modules of dist/ that a build put in its bundle, each relative to `dir`. */
function distInputs(result: { metafile: Metafile }, dir: string): string[] {
  return Object.keys(result.metafile.inputs)
    .map((input) => path.resolve(input))
    .filter((file) => file.startsWith(DIST + path.sep))
    .map((file) => relativeFrom(dir, file));
}

/** Every `import.meta` of a module as `new URL('../…', import.meta.url)`. */
const CLIMBING_URL = /new URL\('\.\.\/[^']*', import\.meta\.url\)/g;

/** True when the bundle's URL, standing for the module's, still finds what the module looks for. */
function importMetaHolds(file: string, contents: string, outfile: string): boolean {
  const dir = path.dirname(file);
  const bundleDir = path.dirname(outfile);
  if (dir === bundleDir) return true;
  const depth = (d: string): number => path.relative(DIST, d).split(path.sep).length;
  const uses = contents.split('import.meta').length - 1;
  return depth(dir) === depth(bundleDir) && (contents.match(CLIMBING_URL) ?? []).length === uses;
}

function cliPlugin(outfile: string): Plugin {
  return {
    name: 'raider-cli',
    setup(b) {
      // Lazy parts stay lazy: a dynamic import of our own module is kept, relative to the bundle.
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        if (args.kind !== 'dynamic-import') return undefined;
        return { path: relativeToBundle(outfile, path.resolve(args.resolveDir, args.path)), external: true };
      });
      // commonjs-libraries reaches CommonJS packages through createRequire so that
      // the ESM loader does not lex them; in a CommonJS bundle plain requires do,
      // and esbuild can follow them into the bundle.
      b.onLoad({ filter: /[\\/]dist[\\/]cli[\\/]commonjs-libraries\.js$/ }, (args) => ({
        loader: 'js',
        resolveDir: path.dirname(args.path),
        contents: [
          "const commander = require('commander');",
          'export const { Command, CommanderError, Option } = commander;',
          "export function stableStringify() { return require('safe-stable-stringify'); }",
          "export function picocolors() { return require('picocolors'); }",
        ].join('\n'),
      }));
      // import.meta.url becomes the bundle's own URL (see `define` below), which is
      // right for a module that sits in the bundle's directory, and for one at the same
      // depth of dist/ whose every use climbs out of its directory (protocol/raider-version.js
      // reads ../../package.json, shared by the hall and the raider).
      b.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
        const contents = fs.readFileSync(args.path, 'utf8');
        if (contents.includes('import.meta') && !importMetaHolds(args.path, contents, outfile)) {
          return {
            errors: [
              {
                text: `${path.relative(REPO, args.path)} reads import.meta but is not in the directory of ${path.relative(REPO, outfile)}`,
              },
            ],
          };
        }
        return undefined;
      });
    },
  };
}

/**
 * zod's error messages in English only. `zod` exports every translation as
 * `locales` (some 350 kB of the bridge's 940 kB bundle), which esbuild keeps
 * because the namespace is exported; its own default is English (`en`), and
 * nothing we bundle picks another.
 */
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      loader: 'js',
      resolveDir: path.dirname(args.path),
      contents: "export { default as en } from './en.js';",
    }));
  },
};

async function bundle(spec: BundleSpec): Promise<void> {
  const result = await build({
    entryPoints: [spec.entry],
    outfile: spec.outfile,
    write: false,
    metafile: true,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'linked',
    // Names kept: a minified class or function still says what it is in an error.
    ...(spec.lean ? { minify: true, keepNames: true } : {}),
    plugins: [cliPlugin(spec.outfile), ...(spec.lean ? [zodEnglishOnly] : [])],
    banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
    define: { 'import.meta.url': '__bundleUrl' },
    logLevel: 'warning',
    // Any other use of import.meta would be empty in CommonJS and break at run time.
    logOverride: { 'empty-import-meta': 'error' },
  });
  // Our modules in the bundle, for bin/raider to see that a `tsc` alone left it behind.
  const inputs = distInputs(result, path.dirname(spec.outfile));
  for (const file of result.outputFiles) {
    const text =
      file.path === spec.outfile
        ? file.text.replace(/^\/\/# sourceMappingURL=/m, `module.exports.bundleInputs = ${JSON.stringify(inputs)};\n$&`)
        : file.text;
    fs.writeFileSync(file.path, text);
  }
}

/** An ES module bundle: its entry in dist/ and the directory of its chunks (see src/os/esm-bundle.ts). */
interface EsmBundleSpec {
  entry: string;
  outdir: string;
}

/** The daemon (`raider hall start`), loaded by src/cli/daemon-bundle.ts. */
export const DAEMON_BUNDLE: EsmBundleSpec = {
  entry: path.join(DIST, 'cli', 'hall', 'daemon.js'),
  outdir: path.join(DIST, 'daemon'),
};
/** The built-in raider's model engines (the AI SDK), loaded by src/raider/model-engine-bundle.ts. */
export const ENGINES_BUNDLE: EsmBundleSpec = {
  entry: path.join(DIST, 'raider', 'engines', 'model-engine.js'),
  outdir: path.join(DIST, 'raider', 'engines-bundle'),
};

/**
 * Each module's import.meta.url becomes its own file's URL as seen from the
 * chunk it lands in (every chunk is in the bundle's directory): files it
 * finds beside itself (libexec/, the SQL migrations, package.json) are found.
 */
function ownUrlPlugin(outdir: string): Plugin {
  return {
    name: 'raider-own-url',
    setup(b) {
      b.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
        const contents = fs.readFileSync(args.path, 'utf8');
        if (!contents.includes('import.meta.url')) return undefined;
        const own = JSON.stringify(relativeFrom(outdir, args.path));
        return { loader: 'js', contents: contents.replaceAll('import.meta.url', `new URL(${own}, import.meta.url).href`) };
      });
    },
  };
}

/**
 * Code that loads many modules as a few ES module chunks: loading a hundred
 * files of dist/ and the packages they use is most of a hall's start (~1.0 s
 * of CPU against ~0.7 s bundled, measured on whole starts) and a good part of
 * a built-in raider run's (the AI SDK: ~0.45 s against ~0.27 s to import),
 * and the test suite starts a hall about a hundred times. ESM with code
 * splitting, not one CommonJS file: what the daemon loads only when
 * configured (cron, Telegram, MCP, the dashboard, the inspector) stays lazy
 * chunks that share the daemon's own modules, never second copies of them.
 */
async function bundleEsm({ entry, outdir }: EsmBundleSpec): Promise<void> {
  fs.rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    entryPoints: [entry],
    outdir,
    bundle: true,
    splitting: true,
    metafile: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    plugins: [ownUrlPlugin(outdir)],
    // The CommonJS packages in it (pg, yaml's kin) call require() for Node's own modules.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  fs.writeFileSync(path.join(outdir, 'inputs.json'), `${JSON.stringify(distInputs(result, outdir))}\n`);
}

export async function bundleCli(): Promise<void> {
  await Promise.all([
    bundle(HALL_BUNDLE),
    bundle(RAIDER_BUNDLE),
    bundle(ACP_RAIDER_BUNDLE),
    bundle(ACP_AGENT_BUNDLE),
    bundleEsm(DAEMON_BUNDLE),
    bundleEsm(ENGINES_BUNDLE),
  ]);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleCli();
}
