/** `raider hall init` and `add-raider`: writing `.raider-hall.yml`, keeping what is already in it. */
import fs from 'node:fs';
import YAML from 'yaml';
import { isKnownEngine, unknownEngineText } from '../../domain/engines.js';
import { SAFE_RAIDER_NAME } from '../../domain/names.js';
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

export function initConfig(file: string, name: string, fields: RaiderFields): void {
  checkName(name);
  if (fs.existsSync(file)) throw new Error(`Refusing to overwrite existing ${file}`);
  const doc = { longhouse: false, raiders: { [name]: entryOf(fields) } };
  fs.writeFileSync(file, YAML.stringify(doc), { flag: 'wx' });
}

export function addRaider(file: string, name: string, fields: RaiderFields): void {
  checkName(name);
  if (!fs.existsSync(file)) throw new Error('No .raider-hall.yml found (run: raider hall init)');
  const doc = YAML.parseDocument(fs.readFileSync(file, 'utf8'));
  const [yamlError] = doc.errors;
  if (yamlError) throw new Error(`${file}: ${yamlError.message}`);
  if (doc.hasIn(['raiders', name])) throw new Error(`Raider '${name}' already defined in ${file}`);
  if (!doc.has('raiders') || doc.get('raiders') === null) doc.set('raiders', doc.createNode({}));
  doc.setIn(['raiders', name], doc.createNode(entryOf(fields)));
  fs.writeFileSync(file, doc.toString());
}
