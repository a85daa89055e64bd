/** `raider hall init` and `add-raider`: writing `.raider-hall.yml`, keeping what is already in it. */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { isKnownEngine, unknownEngineText } from '../../domain/engines.js';
import { SAFE_RAIDER_NAME, slotOf } from '../../domain/names.js';
import { UsageError } from './dir-args.js';

export interface RaiderFields {
  engine?: string;
  persona?: string;
  model?: string;
  packs?: string[];
}

function checkName(name: string): void {
  if (!SAFE_RAIDER_NAME.test(name)) {
    throw new UsageError(`Invalid raider name '${name}': use 1 to 64 letters, digits, '_' or '-', starting with a letter or digit`);
  }
}

/** A value the hall would refuse at load (exit 3, as a bad `.raider-hall.yml` is): refused before it is written. */
export class ConfigValueError extends Error {
  readonly exitCode = 3;
}

function entryOf(fields: RaiderFields): Record<string, unknown> {
  if (fields.engine !== undefined && !isKnownEngine(fields.engine))
    throw new ConfigValueError(`--engine: ${unknownEngineText(fields.engine)}`);
  return {
    ...(fields.engine ? { engine: fields.engine } : {}),
    persona: fields.persona || 'caveman',
    ...(fields.model ? { model: fields.model } : {}),
    packs: fields.packs ?? [],
  };
}

/**
 * The key of a name's entry under `raiders:`. A numbered name (`1bjorn`) is
 * a slot of the raider `bjorn`, and the hall looks its entry up by that base
 * name (domain/names.ts), so an entry keyed `1bjorn` would never be read.
 */
export function entryKey(name: string): string {
  return slotOf(name).baseName;
}

/** What the scripted engine plays when `init` picks it: the engine's default file (docs/raider.md, "Engines"). */
export const SAMPLE_SCRIPT_PATH = path.join('.raider', 'script.yml');

const SAMPLE_SCRIPT = `# The offline sample script of the scripted engine: the first reply whose
# match fits the mission wins. For a model instead, set the raider's engine
# in .raider-hall.yml to openai or anthropic.
replies:
  - match: "look|list|files"
    steps:
      - tool: list_dir
        arguments: { path: "." }
      - message: "I looked around. ({{mission}})"
  - steps:
      - message: "Raid done: {{mission}} (a scripted reply; give this raider a model engine for real work)"
`;

export interface InitResult {
  /** The key written under `raiders:` (the base name of a numbered name). */
  key: string;
  /** The engine written; without `--engine` it is `scripted`, so that the raider can run offline. */
  engine: string;
  /** The sample script written for the scripted engine, relative to the root; absent when one was there. */
  script?: string;
}

/** Writes `.raider-hall.yml` in `root` with one raider, and for the scripted engine a sample script if there is none. */
export function initConfig(root: string, name: string, fields: RaiderFields): InitResult {
  checkName(name);
  const file = path.join(root, '.raider-hall.yml');
  if (fs.existsSync(file)) throw new Error(`Refusing to overwrite existing ${file}`);
  const key = entryKey(name);
  const engine = fields.engine ?? 'scripted';
  const doc = { raiders: { [key]: entryOf({ ...fields, engine }) } };
  fs.writeFileSync(file, YAML.stringify(doc), { flag: 'wx' });
  if (engine !== 'scripted') return { key, engine };
  const script = path.join(root, SAMPLE_SCRIPT_PATH);
  if (fs.existsSync(script)) return { key, engine };
  fs.mkdirSync(path.dirname(script), { recursive: true });
  fs.writeFileSync(script, SAMPLE_SCRIPT, { flag: 'wx' });
  return { key, engine, script: SAMPLE_SCRIPT_PATH };
}

/** Adds a raider's entry, keyed by its base name; returns that key. */
export function addRaider(file: string, name: string, fields: RaiderFields): string {
  checkName(name);
  if (!fs.existsSync(file)) throw new Error('No .raider-hall.yml found (run: raider hall init)');
  const doc = YAML.parseDocument(fs.readFileSync(file, 'utf8'));
  const [yamlError] = doc.errors;
  if (yamlError) throw new Error(`${file}: ${yamlError.message}`);
  const key = entryKey(name);
  if (doc.hasIn(['raiders', key])) {
    const slotNote = key !== name ? ` (${name} is its singleton slot and runs with that entry)` : '';
    throw new Error(`Raider '${key}' already defined in ${file}${slotNote}`);
  }
  if (!doc.has('raiders') || doc.get('raiders') === null) doc.set('raiders', doc.createNode({}));
  doc.setIn(['raiders', key], doc.createNode(entryOf(fields)));
  fs.writeFileSync(file, doc.toString());
  return key;
}
