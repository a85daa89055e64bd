/**
 * The provider store `~/.raider/config.yml` (`providers: {ALIAS: {url, engine, models}}`),
 * as far as the hall needs it: which aliases somebody stored.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import type { ProviderStoreView } from '../../domain/refusal.js';
import { errorMessage, errorCode } from '../../domain/error-message.js';
import { isRecord } from '../../domain/records.js';

export function providerStorePath(home: string = os.homedir()): string {
  return path.join(home, '.raider', 'config.yml');
}

export function readProviderStore(file: string = providerStorePath()): ProviderStoreView {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return { ok: true, aliases: new Set() };
    return { ok: false, error: `${file}: ${errorMessage(err)}` };
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    return { ok: false, error: `${file}: ${errorMessage(err).split('\n')[0]}` };
  }
  if (doc === null || doc === undefined) return { ok: true, aliases: new Set() };
  if (!isRecord(doc)) return { ok: false, error: `${file}: expected a mapping at the top level` };
  const providers = doc.providers;
  if (providers === undefined || providers === null) return { ok: true, aliases: new Set() };
  if (typeof providers !== 'object' || Array.isArray(providers)) {
    return { ok: false, error: `${file}: providers: expected a mapping of aliases` };
  }
  return { ok: true, aliases: new Set(Object.keys(providers)) };
}
