/**
 * `raider provider add ALIAS URL [--engine openai|anthropic] [--model M]
 * [--key-env VAR]`, `raider provider list`, `raider provider rm ALIAS`:
 * the provider bindings in ~/.raider/config.yml that `--provider ALIAS`
 * uses and the hall checks aliases against. Exit 0 done, 1 nothing to
 * remove, 2 usage, 3 a config file that cannot be read or written.
 */
import { parseArgs } from 'node:util';
import { writeAllSync } from '../protocol/canonical-line.js';
import {
  addProvider,
  ALIAS_RE,
  checkProviderUrl,
  PROVIDER_ENGINES,
  providerStorePath,
  readProviders,
  removeProvider,
  type ProviderBinding,
} from './config/provider-store.js';
import { errorMessage, RaiderExit, UsageError } from './errors.js';

export const PROVIDER_SUBCOMMANDS = ['add', 'list', 'rm'] as const;

export const PROVIDER_USAGE = `Usage:
  raider provider add ALIAS URL [--engine openai|anthropic] [--model M]... [--key-env VAR]
  raider provider list
  raider provider rm ALIAS

Provider bindings live in ~/.raider/config.yml; run with raider --provider ALIAS.
URL is the API base, e.g. http://127.0.0.1:11434/v1 (ollama) or https://api.example.com/v1.
--model may be repeated; the first is the default. --key-env names the environment
variable that holds the API key for this provider (keys are never written to the file).
`;

function out(text: string): void {
  writeAllSync(1, text.endsWith('\n') || text === '' ? text : `${text}\n`);
}

export async function providerCommand(argv: string[]): Promise<number> {
  try {
    return run(argv);
  } catch (err) {
    if (err instanceof RaiderExit) {
      writeAllSync(2, `raider provider: ${err.message}\n`);
      return err.exitCode;
    }
    writeAllSync(2, `raider provider: ${errorMessage(err)}\n`);
    return 1;
  }
}

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${errorMessage(err)}\n${PROVIDER_USAGE}`);
  }
}

const OPTIONS = {
  engine: { type: 'string', short: 'e' },
  model: { type: 'string', short: 'm', multiple: true },
  'key-env': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function run(argv: string[]): number {
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(rest);
  if (values.help || sub === '--help' || sub === '-h') {
    out(PROVIDER_USAGE);
    return 0;
  }
  // `raider provider` alone is a usage error, not a mission (issue 14).
  if (sub === undefined) throw new UsageError(`which provider command?\n${PROVIDER_USAGE}`);
  const file = providerStorePath();
  switch (sub) {
    case 'add': {
      const [alias, url, ...extra] = positionals;
      if (alias === undefined || url === undefined || extra.length > 0) throw new UsageError(`add wants ALIAS URL\n${PROVIDER_USAGE}`);
      if (!ALIAS_RE.test(alias)) throw new UsageError(`'${alias}' cannot be an alias: letters, digits, _ and -, at most 64`);
      const engine = PROVIDER_ENGINES.find((e) => e === (values.engine ?? 'openai'));
      if (!engine) throw new UsageError(`--engine must be one of ${PROVIDER_ENGINES.join(', ')}, not '${values.engine}'`);
      const keyEnv = values['key-env'];
      if (keyEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(keyEnv))
        throw new UsageError(`--key-env wants a variable name, not '${keyEnv}'`);
      const binding: ProviderBinding = { alias, url: checkProviderUrl(url), engine, models: values.model ?? [] };
      if (keyEnv !== undefined) binding.keyEnv = keyEnv;
      addProvider(binding, file);
      out(`provider ${alias} -> ${url} (${engine}) saved in ${file}`);
      return 0;
    }
    case 'list': {
      if (positionals.length > 0) throw new UsageError(`list takes no arguments\n${PROVIDER_USAGE}`);
      const bindings = readProviders(file);
      if (bindings.length === 0) {
        writeAllSync(2, `no providers in ${file} (add one with: raider provider add ALIAS URL)\n`);
        return 0;
      }
      for (const b of bindings) {
        const models = b.models.length > 0 ? ` models: ${b.models.join(', ')}` : '';
        const key = b.keyEnv !== undefined ? ` key: $${b.keyEnv}` : '';
        out(`${b.alias}\t${b.engine}\t${b.url}${models}${key}`);
      }
      return 0;
    }
    case 'rm': {
      const [alias, ...extra] = positionals;
      if (alias === undefined || extra.length > 0) throw new UsageError(`rm wants ALIAS\n${PROVIDER_USAGE}`);
      if (!removeProvider(alias, file)) {
        writeAllSync(2, `raider provider: no provider '${alias}' in ${file}\n`);
        return 1;
      }
      out(`provider ${alias} removed from ${file}`);
      return 0;
    }
    default:
      throw new UsageError(`unknown provider command '${sub}'\n${PROVIDER_USAGE}`);
  }
}
