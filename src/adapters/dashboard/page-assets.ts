/**
 * What the browser loads: the page, our scripts and styles (web/dashboard/
 * in the package), and Preact and htm from the installed packages, each at a
 * fixed route: nothing comes from the internet and no request path reaches
 * the file system. Read once, at start: a few tens of KiB.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  type: string;
  body: Buffer;
}

/** Our own scripts and styles: two directories up from here in both src/ and dist/. */
const WEB_DIR = fileURLToPath(new URL('../../../web/dashboard/', import.meta.url));

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
  /** By route: `/app/main.js`, `/vendor/preact.mjs`, ... */
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

export function loadPageAssets(): PageAssets {
  const files = new Map<string, Asset>();
  for (const name of fs.readdirSync(WEB_DIR)) {
    if (!/^[a-z0-9-]+\.(js|css|svg)$/.test(name)) continue;
    files.set(`/app/${name}`, { type: typeOf(name), body: fs.readFileSync(path.join(WEB_DIR, name)) });
  }
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
  const importMap = JSON.stringify({ imports: Object.fromEntries(Object.entries(IMPORTS).map(([name, route]) => [name, at(route)])) });
  // Every module of the first page, asked for with the page instead of one import level after another.
  const preloads = [...files.keys()]
    .filter((route) => /\.m?js$/.test(route) && !NOT_PRELOADED.has(route))
    .map((route) => `<link rel="modulepreload" href="${at(route)}">`);
  const head = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Raider Hall</title>',
    // Our own icon: a browser would otherwise ask for /favicon.ico.
    `<link rel="icon" href="${at('/app/icon.svg')}" type="image/svg+xml">`,
    `<link rel="stylesheet" href="${at('/app/dashboard.css')}">`,
    `<link rel="stylesheet" href="${at('/app/views.css')}">`,
    `<link rel="stylesheet" href="${at('/vendor/uplot.css')}">`,
    `<script type="importmap">${importMap}</script>`,
    ...preloads,
    `<script type="module" src="${at('/app/main.js')}"></script>`,
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
