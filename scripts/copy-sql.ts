/**
 * Copies the SQL files under src/ (the PostgreSQL store's migrations) to the
 * same places under dist/, where the built code looks for them: tsc copies
 * only what it compiles (part of `npm run build`, after `tsc`).
 *
 *   node --import tsx scripts/copy-sql.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(REPO, 'src');
const DIST = path.join(REPO, 'dist');

for (const entry of fs.readdirSync(SRC, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.sql')) continue;
  const from = path.join(entry.parentPath, entry.name);
  const to = path.join(DIST, path.relative(SRC, from));
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to);
}
