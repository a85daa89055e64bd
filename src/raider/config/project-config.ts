/**
 * `<root>/.raider.yml`: the project's engine choice: a run takes its engine from
 * here first, and only then guesses it from the API keys it finds.
 *
 *   engine: openai            # anthropic | openai | scripted
 *   model: qwen2.5-coder
 *   url: http://127.0.0.1:11434/v1
 *   packs: [house-style]      # packs every run gets, before --pack ones
 *   options: { temperature: 0.2 }   # defaults for -o KEY=VALUE
 *
 * Other keys are left alone: other implementations of the raider read this file too.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { OptionValue } from '../args.js';
import { checkConfig, readConfigDocument } from './yaml-file.js';

export interface ProjectConfig {
  /** Absolute path of the file, for messages. */
  file: string;
  engine?: string;
  model?: string;
  url?: string;
  packs: string[];
  options: Record<string, OptionValue>;
}

const schema = z.looseObject({
  engine: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  url: z.string().min(1).optional(),
  packs: z.array(z.string().min(1)).optional(),
  options: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

export function projectConfigPath(root: string): string {
  return join(root, '.raider.yml');
}

export function loadProjectConfig(root: string): ProjectConfig {
  const file = projectConfigPath(root);
  const doc = readConfigDocument(file);
  const data = checkConfig(file, schema, doc === null ? {} : doc);
  const out: ProjectConfig = { file, packs: data.packs ?? [], options: data.options ?? {} };
  if (data.engine !== undefined) out.engine = data.engine;
  if (data.model !== undefined) out.model = data.model;
  if (data.url !== undefined) out.url = data.url;
  return out;
}
