/**
 * Provider bindings in `~/.raider/config.yml`:
 *
 *   providers:
 *     acme:
 *       url: https://llm.example.com/v1
 *       engine: openai            # or anthropic
 *       models: [example-model]   # optional; the first is the default
 *       key_env: ACME_API_KEY     # optional; where the API key is
 *
 * The hall reads the same file to refuse unknown aliases
 * (src/adapters/config/provider-store.ts), so the shape stays exactly this.
 * Writes keep the rest of the file (other keys, comments) and replace it
 * atomically, so a reader never sees half a file.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { isMap, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { PROVIDER_ALIAS } from '../../domain/names.js';
import { ConfigError, errorMessage } from '../errors.js';
import { checkConfig, readConfigDocument } from './yaml-file.js';
import { errorCode } from '../../domain/error-message.js';

export const PROVIDER_ENGINES = ['openai', 'anthropic'] as const;
export type ProviderEngine = (typeof PROVIDER_ENGINES)[number];
export const ALIAS_RE = PROVIDER_ALIAS;

export interface ProviderBinding {
  alias: string;
  url: string;
  engine: ProviderEngine;
  models: string[];
  keyEnv?: string;
}

const bindingSchema = z.looseObject({
  url: z.string().min(1),
  engine: z.enum(PROVIDER_ENGINES).optional(),
  models: z.array(z.string().min(1)).optional(),
  key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
    .optional(),
});

const storeSchema = z.looseObject({
  providers: z.record(z.string(), bindingSchema).nullish(),
});

export function providerStorePath(home: string = homedir()): string {
  return join(home, '.raider', 'config.yml');
}

/** All bindings, in file order. A missing file is an empty store. */
export function readProviders(file: string = providerStorePath()): ProviderBinding[] {
  const doc = readConfigDocument(file);
  const data = checkConfig(file, storeSchema, doc === null ? {} : doc);
  return Object.entries(data.providers ?? {}).map(([alias, b]) => {
    const binding: ProviderBinding = { alias, url: b.url, engine: b.engine ?? 'openai', models: b.models ?? [] };
    if (b.key_env !== undefined) binding.keyEnv = b.key_env;
    return binding;
  });
}

export function findProvider(alias: string, file: string = providerStorePath()): ProviderBinding {
  const binding = readProviders(file).find((b) => b.alias === alias);
  if (!binding) {
    throw new ConfigError(`unknown provider '${alias}': ${file} has no such alias (add one with: raider provider add ${alias} URL)`);
  }
  return binding;
}

/** Check a URL a user wants to store: http(s), no credentials in it. */
export function checkProviderUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`'${url}' is not a URL (want e.g. http://127.0.0.1:11434/v1)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`'${url}': only http and https URLs work`);
  if (parsed.username || parsed.password) throw new ConfigError(`'${url}': put no credentials in the URL; use --key-env VAR`);
  return url;
}

function loadDocument(file: string): Document {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw new ConfigError(`${file}: cannot read: ${errorMessage(err)}`);
  }
  const doc = parseDocument(text);
  const [yamlError] = doc.errors;
  if (yamlError) throw new ConfigError(`${file}: not valid YAML: ${yamlError.message.split('\n')[0]}`);
  if (doc.contents !== null && !isMap(doc.contents)) throw new ConfigError(`${file}: expected a mapping at the top level`);
  // Validate what is there before changing anything, so we never rewrite a file we misread.
  checkConfig(file, storeSchema, doc.toJS() ?? {});
  return doc;
}

function saveDocument(file: string, doc: Document): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, doc.toString());
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** Add or replace a binding. */
export function addProvider(binding: ProviderBinding, file: string = providerStorePath()): void {
  if (!ALIAS_RE.test(binding.alias)) {
    throw new ConfigError(`'${binding.alias}' cannot be a provider alias (letters, digits, _ and -, at most 64)`);
  }
  checkProviderUrl(binding.url);
  const doc = loadDocument(file);
  if (doc.contents === null) doc.contents = doc.createNode({});
  const entry: Record<string, unknown> = { url: binding.url, engine: binding.engine };
  if (binding.models.length > 0) entry.models = binding.models;
  if (binding.keyEnv !== undefined) entry.key_env = binding.keyEnv;
  if (!isMap(doc.get('providers'))) doc.set('providers', doc.createNode({}));
  doc.setIn(['providers', binding.alias], doc.createNode(entry));
  saveDocument(file, doc);
}

/** Remove a binding; false when there was none. */
export function removeProvider(alias: string, file: string = providerStorePath()): boolean {
  const doc = loadDocument(file);
  if (!doc.hasIn(['providers', alias])) return false;
  doc.deleteIn(['providers', alias]);
  saveDocument(file, doc);
  return true;
}
