/**
 * Which scripts the page asks for: `npm run build`'s bundle of web/dashboard/
 * when it was made from the files the hall serves, else the modules one by
 * one (a bundle left behind by an edit of web/dashboard/ is never served).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPageAssets, webSourcesDigest } from '../../src/adapters/dashboard/page-assets.js';
import { tempRoot } from '../support/temp-roots.js';

const WEB = fileURLToPath(new URL('../../web/dashboard/', import.meta.url));

/** A copy of web/dashboard/ and, beside it, a bundle made from it. */
function webWithBundle(): { web: string; bundle: string } {
  const root = tempRoot('page-assets-');
  const web = path.join(root, 'web');
  const bundle = path.join(root, 'bundle');
  fs.cpSync(WEB, web, { recursive: true });
  fs.mkdirSync(bundle);
  fs.writeFileSync(path.join(bundle, 'bundle.js'), 'export {};\n');
  fs.writeFileSync(path.join(bundle, 'bundle.css'), 'body{}\n');
  fs.writeFileSync(path.join(bundle, 'bundle.json'), JSON.stringify({ sources: webSourcesDigest(web) }));
  return { web, bundle };
}

function pageOf(web: string, bundle: string): string {
  return loadPageAssets(web, bundle).page({}).body.toString();
}

function scriptsOf(page: string): string[] {
  return [...page.matchAll(/<(?:script type="module" src|link rel="modulepreload" href)="\/app\/v-[0-9a-f]+\/([^"]+)"/g)].map(
    (m) => m[1] ?? '',
  );
}

describe('the page scripts', () => {
  it('are the bundle, with uPlot alone in the import map, when it was made from the files served', () => {
    const { web, bundle } = webWithBundle();
    const page = pageOf(web, bundle);
    expect(scriptsOf(page)).toEqual(['bundle.js']);
    expect(page).toMatch(/<link rel="stylesheet" href="\/app\/v-[0-9a-f]+\/bundle\.css">/);
    expect(Object.keys(JSON.parse(/<script type="importmap">(.*?)<\/script>/.exec(page)?.[1] ?? '{}').imports)).toEqual(['uplot']);
    expect(loadPageAssets(web, bundle).files.get('/app/bundle.js')?.body.toString()).toBe('export {};\n');
  });

  it('are the modules, preloaded, when a file changed after the bundle was made, or there is none', () => {
    const { web, bundle } = webWithBundle();
    fs.appendFileSync(path.join(web, 'live.js'), '// edited\n');
    for (const page of [pageOf(web, bundle), pageOf(web, path.join(bundle, 'none'))]) {
      expect(scriptsOf(page)).toEqual(expect.arrayContaining(['main.js', 'live.js', 'runs-live.js']));
      expect(scriptsOf(page)).not.toContain('bundle.js');
      expect(page).toMatch(/<script type="module" src="\/app\/v-[0-9a-f]+\/main\.js">/);
      expect(page).not.toContain('uplot.mjs"><');
      expect(Object.keys(JSON.parse(/<script type="importmap">(.*?)<\/script>/.exec(page)?.[1] ?? '{}').imports)).toContain('preact');
    }
  });
});
