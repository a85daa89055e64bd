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

const IMPORT_MAP = JSON.stringify({
  imports: { preact: '/vendor/preact.mjs', 'preact/hooks': '/vendor/preact-hooks.mjs', htm: '/vendor/htm.mjs', uplot: '/vendor/uplot.mjs' },
});

export interface PageAssets {
  page: Asset;
  /** By route: `/app/main.js`, `/vendor/preact.mjs`, ... */
  files: ReadonlyMap<string, Asset>;
  /** The base64 SHA-256 of the inline import map, for the CSP. */
  scriptHashes: readonly string[];
}

function typeOf(file: string): string {
  return TYPES[path.extname(file)] ?? 'application/octet-stream';
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
  const html = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Raider Hall</title>',
    // Our own icon: a browser would otherwise ask for /favicon.ico.
    '<link rel="icon" href="/app/icon.svg" type="image/svg+xml">',
    '<link rel="stylesheet" href="/app/dashboard.css">',
    '<link rel="stylesheet" href="/app/views.css">',
    '<link rel="stylesheet" href="/vendor/uplot.css">',
    `<script type="importmap">${IMPORT_MAP}</script>`,
    '<script type="module" src="/app/main.js"></script>',
    '</head>',
    '<body><div id="app"></div></body>',
    '</html>',
    '',
  ].join('\n');
  return {
    page: { type: 'text/html; charset=utf-8', body: Buffer.from(html) },
    files,
    scriptHashes: [createHash('sha256').update(IMPORT_MAP).digest('base64')],
  };
}
