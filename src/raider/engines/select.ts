/**
 * Which engine a run uses, in this order (issue 5):
 *   1. `--engine NAME` or `-o engine=NAME`;
 *   2. `--provider ALIAS`: a binding from ~/.raider/config.yml;
 *   3. `engine:` in the project's `.raider.yml`;
 *   4. the API keys in the environment (ANTHROPIC_API_KEY, then
 *      OPENAI_API_KEY), or OPENAI_BASE_URL alone (a local server).
 * Nothing found is a configuration error (exit 3) that says how to fix it.
 *
 * API keys: a key from the environment is only sent where the user pointed
 * it — the engine's own service, the base URL from the same environment,
 * or a URL given on the command line. A URL that comes from a project file
 * or a provider binding gets `-o api_key=` or the binding's `key_env`, so a
 * cloned repository cannot point your OPENAI_API_KEY at its own server.
 */
import { join } from 'node:path';
import { loadModelEngine } from '../model-engine-bundle.js';
import type { OptionValue } from '../args.js';
import { loadProjectConfig, type ProjectConfig } from '../config/project-config.js';
import { findProvider, providerStorePath } from '../config/provider-store.js';
import { ConfigError, UsageError } from '../errors.js';
import type { ModelSettings } from './ai-sdk.js';
import type { Engine } from './engine.js';
import type { ModelEngineConfig } from './model-engine.js';
import { loadScript, scriptPath } from './script-file.js';
import { ScriptedEngine } from './scripted.js';
import { KNOWN_ENGINES } from '../../domain/engines.js';

export { KNOWN_ENGINES };

type ModelEngine = 'anthropic' | 'openai';

interface EngineDefaults {
  url: string;
  model: string;
  keyVar: string;
  urlVar: string;
}

const DEFAULTS: Record<ModelEngine, EngineDefaults> = {
  anthropic: { url: 'https://api.anthropic.com/v1', model: 'claude-haiku-4-5', keyVar: 'ANTHROPIC_API_KEY', urlVar: 'ANTHROPIC_BASE_URL' },
  openai: { url: 'https://api.openai.com/v1', model: 'gpt-4.1-mini', keyVar: 'OPENAI_API_KEY', urlVar: 'OPENAI_BASE_URL' },
};

/**
 * What to do when no engine is found, with the real paths. Under a hall
 * (RAIDER_HALL_ENTRY and RAIDER_HALL_CONFIG, set by the hall for each run)
 * the hall's entry is what gives a run its engine, so that key comes first.
 */
export function noEngineHelp(root: string, projectFile: string, env: NodeJS.ProcessEnv): string {
  const script = join(root, '.raider', 'script.yml');
  const entry = env.RAIDER_HALL_ENTRY;
  const config = env.RAIDER_HALL_CONFIG;
  if (entry && config) {
    return (
      `no engine configured for the hall's raider ${entry}. Choose one of:\n` +
      `  raiders.${entry}.engine in ${config}: anthropic or openai (with its API key in the hall's environment),\n` +
      `    or scripted (offline; plays ${script}),\n` +
      `  raiders.${entry}.provider in ${config}: an ALIAS after: raider provider add ALIAS URL [--engine openai|anthropic],\n` +
      `  ANTHROPIC_API_KEY or OPENAI_API_KEY in the hall's environment,\n` +
      `  or engine: in ${projectFile}`
    );
  }
  return (
    'no engine configured. Choose one of:\n' +
    '  --engine openai with OPENAI_API_KEY set (or OPENAI_BASE_URL / -o url=URL for a local server such as ollama),\n' +
    '  --engine anthropic with ANTHROPIC_API_KEY set,\n' +
    '  --provider ALIAS after: raider provider add ALIAS URL [--engine openai|anthropic] [--model M],\n' +
    `  engine: in ${projectFile},\n` +
    `  or --engine scripted (offline; plays ${script} or -o script=FILE)`
  );
}

export interface EngineChoice {
  engine: string | undefined;
  provider: string | undefined;
  model: string | undefined;
  options: Readonly<Record<string, OptionValue>>;
  root: string;
  env: NodeJS.ProcessEnv;
  /** HOME, for ~/.raider/config.yml. */
  home?: string;
  /** The project's .raider.yml, when the caller has read it already. */
  project?: ProjectConfig;
}

/** Where the engine's URL came from: decides whether an environment key may go there. */
type UrlSource = 'default' | 'environment' | 'command line' | 'project' | 'provider';

interface Resolved {
  name: string;
  model: string | undefined;
  url: string | undefined;
  urlSource: UrlSource;
  keyEnv?: string;
  /** For messages: why this engine. */
  via: string;
}

/** What selection decided: the scripted engine and its script, or a model engine's configuration. */
export type EnginePlan = { engine: 'scripted'; script: string; model: string | undefined } | ModelEngineConfig;

/** Decide the engine without loading any SDK; ConfigError (exit 3) / UsageError (exit 2) on problems. */
export function planEngine(choice: EngineChoice): EnginePlan {
  const project = choice.project ?? loadProjectConfig(choice.root);
  const options = { ...project.options, ...choice.options };
  const r = resolve(choice, project, options);
  switch (r.name) {
    case 'scripted': {
      const script = options.script;
      return {
        engine: 'scripted',
        script: scriptPath(choice.root, script === undefined ? undefined : String(script), choice.env),
        model: choice.model,
      };
    }
    case 'anthropic':
    case 'openai':
      return modelEngineConfig(r.name, r, options, choice.env);
    default:
      throw new ConfigError(`unknown engine '${r.name}' (known: ${KNOWN_ENGINES.join(', ')}), ${r.via}`);
  }
}

/** Build the engine for a run. */
export async function selectEngine(choice: EngineChoice): Promise<Engine> {
  const plan = planEngine(choice);
  if (plan.engine === 'scripted') return new ScriptedEngine(loadScript(plan.script), plan.model);
  return (await loadModelEngine()).buildModelEngine(plan);
}

function optionString(options: Readonly<Record<string, OptionValue>>, key: string): string | undefined {
  const v = options[key];
  return v === undefined ? undefined : String(v);
}

function resolve(choice: EngineChoice, project: ProjectConfig, options: Readonly<Record<string, OptionValue>>): Resolved {
  const cliUrl = optionString(choice.options, 'url');
  const explicit = choice.engine ?? optionString(choice.options, 'engine');

  if (choice.provider !== undefined) {
    if (explicit !== undefined || cliUrl !== undefined) {
      throw new UsageError('--provider cannot be combined with --engine, -o engine= or -o url= (the binding decides them)');
    }
    const file = providerStorePath(choice.home);
    const b = findProvider(choice.provider, file);
    if (choice.model !== undefined && b.models.length > 0 && !b.models.includes(choice.model)) {
      throw new ConfigError(`provider '${b.alias}' offers no model '${choice.model}' (offers: ${b.models.join(', ')}; ${file})`);
    }
    const r: Resolved = {
      name: b.engine,
      model: choice.model ?? b.models[0],
      url: b.url,
      urlSource: 'provider',
      via: `provider ${b.alias}`,
    };
    if (b.keyEnv !== undefined) r.keyEnv = b.keyEnv;
    return r;
  }

  const fromProject = explicit === undefined || explicit === project.engine;
  const projectUrl = fromProject ? project.url : undefined;
  const url = cliUrl ?? projectUrl;
  const urlSource: UrlSource = cliUrl !== undefined ? 'command line' : projectUrl !== undefined ? 'project' : 'default';
  const model = choice.model ?? optionString(options, 'model') ?? (fromProject ? project.model : undefined);

  if (explicit !== undefined) return { name: explicit, model, url, urlSource, via: 'chosen with --engine' };
  if (project.engine !== undefined) return { name: project.engine, model, url, urlSource, via: `engine: in ${project.file}` };
  if (choice.env.ANTHROPIC_API_KEY) return { name: 'anthropic', model, url, urlSource, via: 'ANTHROPIC_API_KEY is set' };
  if (choice.env.OPENAI_API_KEY || choice.env.OPENAI_BASE_URL) return { name: 'openai', model, url, urlSource, via: 'OPENAI_* is set' };
  throw new ConfigError(noEngineHelp(choice.root, project.file, choice.env));
}

function numberOption(options: Readonly<Record<string, OptionValue>>, key: string, min: number): number | undefined {
  const v = options[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !(v >= min)) throw new ConfigError(`-o ${key}=${String(v)}: want a number of at least ${min}`);
  return v;
}

/** Where a model engine's calls go, with which key and settings. */
function modelEngineConfig(
  name: ModelEngine,
  r: Resolved,
  options: Readonly<Record<string, OptionValue>>,
  env: NodeJS.ProcessEnv,
): ModelEngineConfig {
  const d = DEFAULTS[name];
  let url = r.url;
  let urlSource = r.urlSource;
  const urlFromEnv = env[d.urlVar];
  if (url === undefined && urlFromEnv) {
    url = urlFromEnv;
    urlSource = 'environment';
  }
  url ??= d.url;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new ConfigError(`${name} engine: '${url}' (from the ${urlSource}) is not an http(s) URL`);
  }

  // See the header: an environment key only goes where the user sent it.
  const keyFromEnv = urlSource === 'default' || urlSource === 'environment' || urlSource === 'command line';
  const apiKey =
    optionString(options, 'api_key') ?? (r.keyEnv !== undefined ? env[r.keyEnv] : undefined) ?? (keyFromEnv ? env[d.keyVar] : undefined);
  if (r.keyEnv !== undefined && !env[r.keyEnv] && optionString(options, 'api_key') === undefined) {
    throw new ConfigError(`${name} engine: ${r.via} wants its API key in $${r.keyEnv}, which is not set`);
  }
  if (apiKey === undefined && urlSource === 'default') {
    throw new ConfigError(
      `${name} engine: no API key; set ${d.keyVar} (or -o api_key=KEY), or point it at a local server with ${d.urlVar} or -o url=URL`,
    );
  }

  const settings: ModelSettings = { maxRetries: numberOption(options, 'max_retries', 0) ?? 2 };
  const maxTokens = numberOption(options, 'max_tokens', 1);
  if (maxTokens !== undefined) settings.maxOutputTokens = maxTokens;
  const temperature = numberOption(options, 'temperature', 0);
  if (temperature !== undefined) settings.temperature = temperature;

  return { engine: name, model: r.model ?? d.model, url, apiKey, settings };
}
