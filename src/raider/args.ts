/**
 * The raider's command line: `raider [flags] -- MISSION`.
 *
 * node:util parseArgs does the lexing. It runs non-strict with tokens so
 * that `--stream-json` and `--json` can be plain switches that also accept
 * an inline version (`--stream-json=1`) — a strict string option would
 * swallow the next word (`--json 3` must leave `3` in the prompt) — and so
 * that every problem becomes a UsageError with our own wording.
 */
import { parseArgs } from 'node:util';
import { PERMISSION_MODES, type PermissionMode } from '../domain/permission.js';
import { UsageError } from './errors.js';

export type MachineFormat = 'json' | 'stream-json';
export type OptionValue = string | number | boolean;

/** Which session the run writes to. */
export type SessionChoice = { kind: 'new' } | { kind: 'none' } | { kind: 'continue' } | { kind: 'resume'; ref: string };

export interface RaiderArgs {
  help: boolean;
  version: boolean;
  machine: MachineFormat | undefined;
  engine: string | undefined;
  model: string | undefined;
  provider: string | undefined;
  packs: string[];
  /** Undefined unless given: then the project's settings decide (permissions/settings.ts). */
  permissionMode: PermissionMode | undefined;
  /** `-o key=value` pairs, later ones win; numbers and true/false are coerced. */
  options: Record<string, OptionValue>;
  root: string | undefined;
  session: SessionChoice;
  permissionChannel: string | undefined;
  maxIterations: number;
  /** The prompt words, to be joined with single spaces. */
  words: string[];
  /** The words of `words` that came before `--`: see missionWordsProblem. */
  loose: string[];
}

export const DEFAULT_MAX_ITERATIONS = 10000;
const KNOWN_MACHINE_VERSIONS = ['1'];

const OPTIONS = {
  'stream-json': { type: 'boolean' },
  json: { type: 'boolean' },
  engine: { type: 'string', short: 'e' },
  model: { type: 'string', short: 'm' },
  provider: { type: 'string' },
  pack: { type: 'string', multiple: true },
  'permission-mode': { type: 'string' },
  option: { type: 'string', short: 'o', multiple: true },
  root: { type: 'string', short: 'r' },
  session: { type: 'string' },
  continue: { type: 'boolean' },
  'no-session': { type: 'boolean' },
  'permission-channel': { type: 'string' },
  'max-iterations': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

type OptionName = keyof typeof OPTIONS;

function isOptionName(name: string): name is OptionName {
  return Object.hasOwn(OPTIONS, name);
}

/** `-o` values: integers and decimals become numbers, true/false booleans. */
/** The value of a string option; parsing has already refused a missing one, this says so to the compiler. */
function needValue(value: string | undefined, rawName: string): string {
  if (value === undefined) throw new UsageError(`option ${rawName} needs a value`);
  return value;
}

export function coerceOptionValue(raw: string): OptionValue {
  if (/^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  return raw;
}

export function parseRaiderArgs(argv: readonly string[]): RaiderArgs {
  const { tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });

  const out: RaiderArgs = {
    help: false,
    version: false,
    machine: undefined,
    engine: undefined,
    model: undefined,
    provider: undefined,
    packs: [],
    permissionMode: undefined,
    options: {},
    root: undefined,
    session: { kind: 'new' },
    permissionChannel: undefined,
    maxIterations: DEFAULT_MAX_ITERATIONS,
    words: [],
    loose: [],
  };
  let terminated = false;
  const machineFlags: string[] = [];
  const sessionFlags: string[] = [];

  for (const token of tokens) {
    if (token.kind === 'positional') {
      out.words.push(token.value);
      if (!terminated) out.loose.push(token.value);
      continue;
    }
    if (token.kind === 'option-terminator') {
      terminated = true;
      continue;
    }

    const { name, rawName } = token;
    if (!isOptionName(name)) throw new UsageError(`unknown option ${rawName}`);
    const spec = OPTIONS[name];

    let value: string | undefined;
    if (spec.type === 'string') {
      // Non-strict parseArgs takes any next word as the value, even `--`.
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))) {
        throw new UsageError(`option ${rawName} needs a value`);
      }
      value = token.value;
    } else if (token.value !== undefined && name !== 'stream-json' && name !== 'json') {
      throw new UsageError(`option ${rawName} takes no value`);
    }

    switch (name) {
      case 'stream-json':
      case 'json': {
        if (token.value !== undefined && !KNOWN_MACHINE_VERSIONS.includes(token.value)) {
          throw new UsageError(`unknown --${name} version '${token.value}' (known: ${KNOWN_MACHINE_VERSIONS.join(', ')})`);
        }
        if (!machineFlags.includes(`--${name}`)) machineFlags.push(`--${name}`);
        out.machine = name;
        break;
      }
      case 'engine':
        out.engine = value;
        break;
      case 'model':
        out.model = value;
        break;
      case 'provider':
        out.provider = value;
        break;
      case 'pack':
        out.packs.push(needValue(value, rawName));
        break;
      case 'permission-mode': {
        const mode = PERMISSION_MODES.find((m) => m === value);
        if (!mode) {
          throw new UsageError(`unknown --permission-mode '${value}' (known: ${PERMISSION_MODES.join(', ')})`);
        }
        out.permissionMode = mode;
        break;
      }
      case 'option': {
        const pair = needValue(value, rawName);
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new UsageError(`bad option '${pair}' (want -o KEY=VALUE)`);
        out.options[pair.slice(0, eq)] = coerceOptionValue(pair.slice(eq + 1));
        break;
      }
      case 'root':
        out.root = value;
        break;
      case 'session':
        sessionFlags.push('--session');
        out.session = { kind: 'resume', ref: needValue(value, rawName) };
        break;
      case 'continue':
        sessionFlags.push('--continue');
        out.session = { kind: 'continue' };
        break;
      case 'no-session':
        sessionFlags.push('--no-session');
        out.session = { kind: 'none' };
        break;
      case 'permission-channel':
        out.permissionChannel = value;
        break;
      case 'max-iterations': {
        if (value === undefined || !/^\d+$/.test(value) || Number(value) < 1) {
          throw new UsageError(`--max-iterations wants a positive whole number, not '${value}'`);
        }
        out.maxIterations = Number(value);
        break;
      }
      case 'help':
        out.help = true;
        break;
      case 'version':
        out.version = true;
        break;
    }
  }

  if (machineFlags.length > 1) {
    throw new UsageError(`${machineFlags.join(', ')}: only one machine output format at a time`);
  }
  if (sessionFlags.length > 1) {
    throw new UsageError(`${sessionFlags.join(', ')}: only one of --session, --continue, --no-session at a time`);
  }
  return out;
}

/** The first words of `raider` that name a command rather than start the built-in raider. */
export const COMMANDS = ['hall', 'acp', 'acp-client', 'acp-agent', 'demo', 'provider', 'help'] as const;

/**
 * Why the words before `--` are not a mission, or null when they are. A
 * mission is the words after `--`, one argument with whitespace in it (a
 * quoted mission), or stdin; any other word before `--` is taken for a
 * mistyped command, so that `raider hal stop` is a usage error and not an
 * agent run (with tools, in the current directory, maybe billed).
 */
export function missionWordsProblem(loose: readonly string[]): string | null {
  const [word] = loose;
  if (word === undefined || (loose.length === 1 && /\s/.test(word))) return null;
  const hint = 'A mission goes after --: raider [flags] -- MISSION (or quote it as one argument).';
  if ((COMMANDS as readonly string[]).includes(word)) return `'${word}' is a command: it comes first (raider ${word} ...).\n${hint}`;
  const near = COMMANDS.find((c) => editDistance(word.toLowerCase(), c) <= Math.min(2, c.length - 2));
  return `unknown command '${word}'${near ? ` (did you mean ${near}?)` : ''}\n${hint}`;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (before[j - 2] ?? 0) + 1);
      row.push(best);
    }
    before = prev;
    prev = row;
  }
  return prev[b.length] ?? 0;
}

export const USAGE = `Usage: raider [flags] -- MISSION...
       raider [flags] "ONE QUOTED MISSION"
       raider COMMAND ...

Runs one agent run on MISSION: the words after --, joined with spaces, or
one argument with whitespace in it; read from stdin when there are none and
stdin is not a terminal. Any other word is a command or a usage error.

Commands:
  hall                        run and talk to a Raider Hall (raider hall --help)
  acp                         an ACP agent for editors, relaying to a hall
  acp-client                  one mission as a prompt turn of an ACP agent (docs/agents.md)
  acp-agent                   this raider as an ACP agent on stdio, for editors and halls
  provider add|list|rm        provider bindings in ~/.raider/config.yml
  demo [DIR]                  an offline demo hall in the foreground
  help                        this text

Engine (first that applies: --engine, --provider, .raider.yml, API keys):
  -e, --engine NAME           openai (OpenAI-compatible: OpenAI, ollama, vLLM,
                              llama.cpp), anthropic, or scripted (offline, plays
                              a YAML script)
  -m, --model NAME            model id
      --provider ALIAS        provider binding from ~/.raider/config.yml
                              (raider provider add|list|rm)
  -o, --option KEY=VALUE      repeatable; numbers and true/false are coerced.
                              engine=NAME, url=BASE_URL, api_key=KEY,
                              max_retries=N, max_tokens=N, temperature=X,
                              script=FILE (the scripted engine's script)
Workspace:
  -r, --root DIR              working directory; tools are confined to it
                              (default: the current directory)
      --pack NAME             instructions from .raider/packs/NAME.md,
                              ~/.raider/packs/NAME.md or a built-in persona
                              (caveman, polite, terse); repeatable
      --permission-mode MODE  default | acceptEdits | plan | auto | bypassPermissions
                              (default: permissions.default_mode of
                              .raider/config.yml, the Claude settings, else default)
      --permission-channel P  UNIX socket for permission questions (from the hall)
Output:
      --stream-json[=1]       JSON Lines events on stdout (stream-json v1)
      --json[=1]              one pretty JSON document at the end
      --max-iterations N      cap on tool rounds (default ${DEFAULT_MAX_ITERATIONS})
Sessions (<root>/.raider/sessions):
      --session ID            continue that session (id, prefix of 4+, or last 4 hex)
      --continue              continue the newest session
      --no-session            record nothing
Other:
  -h, --help                  this text
      --version               the version

Exit codes: 0 completed, 1 failed, 2 usage, 3 configuration, 4 session in use;
a cancelled run dies by SIGINT, an interrupted one by SIGTERM.
`;
