/**
 * Bundles the dashboard's first page (part of `npm run build`): our modules of
 * web/dashboard/ with Preact and htm into one minified module, and our style
 * sheets with uPlot's into one, in dist/web/:
 *
 *   dist/web/bundle.js     main.js and every module it imports statically
 *   dist/web/bundle.css    dashboard.css, views.css, uPlot's style sheet
 *   dist/web/bundle.json   {"sources": DIGEST}: the digest of web/dashboard/ it was made from
 *
 * Why: unbundled, a first load asks for 17 modules and 3 style sheets, and
 * Chromium compiles and links each module on its own. The hall serves the
 * bundle when its digest matches the files in web/dashboard/ (so a bundle
 * left behind by an edit is never served), else the modules as they are:
 * the dashboard still needs no build step. uPlot itself stays out (`import('uplot')`
 * through the page's import map): only the charts page loads it.
 *
 *   node --import tsx scripts/bundle-web.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { webSourcesDigest } from '../src/adapters/dashboard/page-assets.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const WEB = path.join(REPO, 'web', 'dashboard');
const OUT = path.join(REPO, 'dist', 'web');

export async function bundleWeb(): Promise<void> {
  fs.mkdirSync(OUT, { recursive: true });
  const common: BuildOptions = {
    bundle: true,
    minify: true,
    write: false,
    logLevel: 'warning',
    target: ['chrome105', 'firefox110', 'safari16'],
  };
  const [script, style] = await Promise.all([
    build({
      ...common,
      entryPoints: [path.join(WEB, 'main.js')],
      outfile: path.join(OUT, 'bundle.js'),
      format: 'esm',
      platform: 'browser',
      // Loaded by the charts page only, through the import map.
      external: ['uplot'],
    }),
    build({
      ...common,
      stdin: {
        contents: ['@import "./dashboard.css";', '@import "./views.css";', '@import "uplot/dist/uPlot.min.css";'].join('\n'),
        resolveDir: WEB,
        loader: 'css',
      },
      outfile: path.join(OUT, 'bundle.css'),
    }),
  ]);
  for (const file of [...(script.outputFiles ?? []), ...(style.outputFiles ?? [])]) fs.writeFileSync(file.path, file.text);
  fs.writeFileSync(path.join(OUT, 'bundle.json'), `${JSON.stringify({ sources: webSourcesDigest(WEB) })}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleWeb();
}
