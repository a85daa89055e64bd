/**
 * Reading the raider's small YAML/JSON configuration files. Every problem
 * becomes a ConfigError that names the file and the key, so a user can
 * fix it without reading code.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError, errorMessage } from '../errors.js';
import { errorCode } from '../../domain/error-message.js';

/** The parsed document, or `undefined` when the file does not exist. */
export function readConfigDocument(file: string, format: 'yaml' | 'json' = 'yaml'): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw new ConfigError(`${file}: cannot read: ${errorMessage(err)}`);
  }
  try {
    return format === 'json' ? (JSON.parse(text) as unknown) : (parseYaml(text) as unknown);
  } catch (err) {
    throw new ConfigError(`${file}: not valid ${format === 'json' ? 'JSON' : 'YAML'}: ${errorMessage(err).split('\n')[0]}`);
  }
}

/**
 * The first problem zod found and where, as `key.path[0]` (or `top` for the
 * document itself). zod reports at least one issue on failure; should it not,
 * the issue is absent and the place is `top`.
 */
export function firstIssue(error: z.ZodError, top: string): { where: string; issue: z.core.$ZodIssue | undefined } {
  const [issue] = error.issues;
  const where = issue?.path.length
    ? issue.path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
        .join('')
        .replace(/^\./, '')
    : top;
  return { where, issue };
}

/** Check a document against a schema; the first issue is reported as `FILE: key.path: problem`. */
export function checkConfig<T>(file: string, schema: z.ZodType<T>, doc: unknown): T {
  const parsed = schema.safeParse(doc ?? {});
  if (parsed.success) return parsed.data;
  const { where, issue } = firstIssue(parsed.error, '(top level)');
  throw new ConfigError(`${file}: ${where}: ${issue?.message ?? 'does not match its schema'}`);
}
