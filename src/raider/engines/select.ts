/**
 * Which engine a run uses: `--engine`, else `-o engine=`, else one whose API
 * key is in the environment. Only `scripted` exists in this build; the real
 * engines are known by name so that choosing one gives a clear
 * configuration error instead of "unknown engine".
 */
import { ConfigError } from '../errors.js';
import type { Engine } from './engine.js';
import { loadScript, scriptPath } from './script-file.js';
import { ScriptedEngine } from './scripted.js';

export const KNOWN_ENGINES = ['anthropic', 'openai', 'scripted'] as const;

const API_KEY_ENGINES: ReadonlyArray<readonly [string, string]> = [
  ['ANTHROPIC_API_KEY', 'anthropic'],
  ['OPENAI_API_KEY', 'openai'],
];

export interface EngineChoice {
  engine: string | undefined;
  model: string | undefined;
  options: Readonly<Record<string, string | number | boolean>>;
  root: string;
  env: NodeJS.ProcessEnv;
}

/** Build the engine for a run, or throw a ConfigError (exit 3). */
export function selectEngine(choice: EngineChoice): Engine {
  const optionEngine = choice.options.engine;
  let name = choice.engine ?? (optionEngine === undefined ? undefined : String(optionEngine));
  if (name === undefined) {
    name = API_KEY_ENGINES.find(([key]) => choice.env[key])?.[1];
  }
  if (name === undefined) {
    throw new ConfigError(
      'no engine configured: use --engine scripted (offline; plays <root>/.raider/script.yml or -o script=FILE), ' +
        'or set ANTHROPIC_API_KEY or OPENAI_API_KEY',
    );
  }
  switch (name) {
    case 'scripted': {
      const script = choice.options.script;
      const file = scriptPath(choice.root, script === undefined ? undefined : String(script), choice.env);
      return new ScriptedEngine(loadScript(file), choice.model);
    }
    case 'anthropic':
    case 'openai':
      throw new ConfigError(`engine ${name} is not available in this raider yet (available: scripted)`);
    default:
      throw new ConfigError(`unknown engine '${name}' (known: ${KNOWN_ENGINES.join(', ')})`);
  }
}
