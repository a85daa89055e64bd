/**
 * What the browser loads: the page, our scripts and styles (web/dashboard/
 * in the package), and Preact and htm from the installed packages, each at a
 * fixed route: nothing comes from the internet and no request path reaches
 * the file system. Read once, at start: a few tens of KiB.
 *
 * When `npm run build` made a bundle of the same web/dashboard/ files
 * (scripts/bundle-web.ts: dist/web/), the page asks for it instead: one
 * script and one style sheet instead of 17 modules and 3 sheets. Without
 * one, or with one made from other files, the page loads the modules.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export interface Asset {
  type: string;
  body: Buffer;
}

/** Our own scripts and styles: two directories up from here in both src/ and dist/. */
const WEB_DIR = fileURLToPath(new URL('../../../web/dashboard/', import.meta.url));
/** The bundle `npm run build` makes of them (scripts/bundle-web.ts), seen from src/ and dist/ alike. */
const BUNDLE_DIR = fileURLToPath(new URL('../../../dist/web/', import.meta.url));
const WEB_FILE = /^[a-z0-9-]+\.(js|css|svg)$/;
/** The machines' statecharts `npm run build` lays out (scripts/statechart-svg.ts), named by machine id. */
const STATECHART_FILE = /^[A-Za-z0-9-]+\.svg$/;
/** Where the page finds them: `/app/statecharts/run.svg`. */
export const STATECHART_ROUTE = '/app/statecharts/';

const VENDOR: Readonly<Record<string, string>> = {
  '/vendor/preact.mjs': 'preact',
  '/vendor/preact-hooks.mjs': 'preact/hooks',
  '/vendor/htm.mjs': 'htm',
  // Its package's main is CommonJS: the ES module is named by its path.
  '/vendor/uplot.mjs': 'uplot/dist/uPlot.esm.js',
  '/vendor/uplot.css': 'uplot/dist/uPlot.min.css',
};

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The page's import map, before the version goes into its routes. */
const IMPORTS: Readonly<Record<string, string>> = {
  preact: '/vendor/preact.mjs',
  'preact/hooks': '/vendor/preact-hooks.mjs',
  htm: '/vendor/htm.mjs',
  uplot: '/vendor/uplot.mjs',
};

export interface PageAssets {
  /** The page, with the first data its Runs view needs inlined (JSON the browser never runs). */
  page(initial: unknown): Asset;
  /** By route: `/app/main.js`, `/vendor/preact.mjs`, ... (and `/app/bundle.js`, `/app/bundle.css` when built) */
  files: ReadonlyMap<string, Asset>;
  /**
   * The same files under a route that names this version of them
   * (`/app/v-HASH/main.js`): the page asks for these, and a browser may keep
   * them, since another version of a file has another route.
   */
  versioned: ReadonlyMap<string, Asset>;
  /** The base64 SHA-256 of the inline import map, for the CSP. */
  scriptHashes: readonly string[];
}

function typeOf(file: string): string {
  return TYPES[path.extname(file)] ?? 'application/octet-stream';
}

/** Where the page finds the bundle of our modules and sheets, when there is one. */
const BUNDLE_SCRIPT = '/app/bundle.js';
const BUNDLE_STYLE = '/app/bundle.css';

/** Modules the first page does not need: the charts page loads uPlot when it opens. */
const NOT_PRELOADED: ReadonlySet<string> = new Set(['/vendor/uplot.mjs']);

/**
 * JSON inside `<script type="application/json">`: a `<` in a string could
 * close the element (`</script>`) or open a comment, so every one is escaped;
 * JSON.parse reads `\u003c` back as `<`.
 */
export function inlineJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/</g, '\\u003c');
}

function readWebFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of fs.readdirSync(dir).sort()) if (WEB_FILE.test(name)) files.set(name, fs.readFileSync(path.join(dir, name)));
  return files;
}

/** The statecharts in `dir`, by route; none when the build has not made them. */
function readStatecharts(dir: string): Map<string, Buffer> {
  const charts = new Map<string, Buffer>();
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return charts;
  }
  for (const name of names) if (STATECHART_FILE.test(name)) charts.set(`${STATECHART_ROUTE}${name}`, fs.readFileSync(path.join(dir, name)));
  return charts;
}

function digestOf(files: ReadonlyMap<string, Buffer>): string {
  const digest = createHash('sha256');
  for (const [name, body] of files) digest.update(`${name}\0${body.length}\0`).update(body);
  return digest.digest('hex');
}

/** The digest of our files in `dir` (web/dashboard/): a bundle made from other files is not served. */
export function webSourcesDigest(dir: string): string {
  return digestOf(readWebFiles(dir));
}

const bundleManifestSchema = z.object({ sources: z.string() });

/** The bundle in `dir` when it was made from `sources`, else null (none made, or made before an edit). */
function readBundle(dir: string, sources: string): { script: Buffer; style: Buffer } | null {
  try {
    const manifest = bundleManifestSchema.safeParse(JSON.parse(fs.readFileSync(path.join(dir, 'bundle.json'), 'utf8')));
    if (!manifest.success || manifest.data.sources !== sources) return null;
    return { script: fs.readFileSync(path.join(dir, 'bundle.js')), style: fs.readFileSync(path.join(dir, 'bundle.css')) };
  } catch {
    return null;
  }
}

/** `webDir` and `bundleDir` are for tests; the hall serves the package's. */
export function loadPageAssets(webDir = WEB_DIR, bundleDir = BUNDLE_DIR): PageAssets {
  const web = readWebFiles(webDir);
  const bundle = readBundle(bundleDir, digestOf(web));
  const files = new Map<string, Asset>();
  for (const [name, body] of web) files.set(`/app/${name}`, { type: typeOf(name), body });
  if (bundle) {
    files.set(BUNDLE_SCRIPT, { type: typeOf(BUNDLE_SCRIPT), body: bundle.script });
    files.set(BUNDLE_STYLE, { type: typeOf(BUNDLE_STYLE), body: bundle.style });
  }
  // Made from the machines, not from web/dashboard/: served whenever the build made them.
  for (const [route, body] of readStatecharts(path.join(bundleDir, 'statecharts'))) files.set(route, { type: typeOf(route), body });
  for (const [route, specifier] of Object.entries(VENDOR)) {
    const file = fileURLToPath(import.meta.resolve(specifier));
    // Their source maps are not served: a trailing sourceMappingURL would make devtools ask for them.
    const text = fs.readFileSync(file, 'utf8').replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n');
    files.set(route, { type: typeOf(file), body: Buffer.from(text) });
  }
  // One hash of every file: relative imports (./live.js) stay inside one version.
  const digest = createHash('sha256');
  for (const [route, file] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) digest.update(route).update(file.body);
  const version = `v-${digest.digest('hex').slice(0, 16)}`;
  const at = (route: string): string => route.replace(/^\/(app|vendor)\//, `/$1/${version}/`);
  const versioned = new Map([...files].map(([route, file]) => [at(route), file]));
  // The bundle holds Preact and htm: only uPlot is still imported by name.
  const imports = Object.entries(IMPORTS).filter(([name]) => !bundle || name === 'uplot');
  const importMap = JSON.stringify({ imports: Object.fromEntries(imports.map(([name, route]) => [name, at(route)])) });
  // Unbundled, every module of the first page is asked for with the page instead of one import level after another.
  const preloads = bundle
    ? []
    : [...files.keys()]
        .filter((route) => /\.m?js$/.test(route) && !NOT_PRELOADED.has(route))
        .map((route) => `<link rel="modulepreload" href="${at(route)}">`);
  const styles = bundle ? [BUNDLE_STYLE] : ['/app/dashboard.css', '/app/views.css', '/vendor/uplot.css'];
  const head = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Raider Hall</title>',
    // Our own icon: a browser would otherwise ask for /favicon.ico.
    `<link rel="icon" href="${at('/app/icon.svg')}" type="image/svg+xml">`,
    ...styles.map((route) => `<link rel="stylesheet" href="${at(route)}">`),
    `<script type="importmap">${importMap}</script>`,
    ...preloads,
    `<script type="module" src="${at(bundle ? BUNDLE_SCRIPT : '/app/main.js')}"></script>`,
    '</head>',
    '<body><div id="app"></div>',
  ].join('\n');
  return {
    page: (initial) => ({
      type: 'text/html; charset=utf-8',
      // A data block: not a script the CSP would have to allow, and never run.
      body: Buffer.from(`${head}\n<script type="application/json" id="initial">${inlineJson(initial)}</script>\n</body>\n</html>\n`),
    }),
    files,
    versioned,
    scriptHashes: [createHash('sha256').update(importMap).digest('base64')],
  };
}
