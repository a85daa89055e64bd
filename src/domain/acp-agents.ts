/**
 * ACP agents a raider entry can run (`acp:` or a preset `agent:`), and the
 * command line the hall starts the agent with. The presets name the npm
 * package that provides each command, so a command that is not installed
 * is an error a person can act on (docs/agents.md).
 */

export interface AcpPreset {
  command: string;
  args: readonly string[];
  /** The npm package that installs `command`. */
  package: string;
}

export const ACP_PRESETS = {
  claude: { command: 'claude-agent-acp', args: [], package: '@agentclientprotocol/claude-agent-acp' },
  codex: { command: 'codex-acp', args: [], package: '@agentclientprotocol/codex-acp' },
  gemini: { command: 'gemini', args: ['--acp'], package: '@google/gemini-cli' },
  opencode: { command: 'opencode', args: ['acp'], package: 'opencode-ai' },
} as const satisfies Record<string, AcpPreset>;

export type AcpPresetName = keyof typeof ACP_PRESETS;

export const ACP_PRESET_NAMES = Object.keys(ACP_PRESETS) as AcpPresetName[];

/** An entry's `acp:` key as the config gives it (`${VAR}` in `env` not yet expanded). */
export interface AcpSettings {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  /** Seconds the agent has to answer `initialize` and `session/new` (the bridge's default when absent). */
  start_timeout?: number;
  /** False: the agent's sessions do not get the hall's MCP server, even with `mcp.enable`. */
  hall_tools?: boolean;
  /** How many bridges the hall keeps started ahead for this entry's runs (0 or absent: none). */
  keep_warm?: number;
  /** Seconds an unused warm bridge waits before the hall ends it and starts another. */
  warm_idle?: number;
}

/** The most warm bridges one entry may keep: each idle one costs about 20 MiB. */
export const MAX_KEEP_WARM = 8;
/** An idle warm bridge's life when the entry says no `warm_idle`. */
export const DEFAULT_WARM_IDLE_S = 600;

/** How to start an entry's agent: its command, arguments, extra environment, and the package that provides it when known. */
export interface AcpAgentCommand extends AcpSettings {
  package?: string;
}

/** The agent an entry runs, or undefined for an entry of the built-in raider. */
export function acpAgentCommand(entry: { acp?: AcpSettings; agent?: AcpPresetName }): AcpAgentCommand | undefined {
  if (entry.acp !== undefined) {
    const known = Object.values(ACP_PRESETS).find((p) => p.command === entry.acp?.command);
    return { ...entry.acp, ...(known !== undefined ? { package: known.package } : {}) };
  }
  if (entry.agent !== undefined) {
    const preset: AcpPreset = ACP_PRESETS[entry.agent];
    return { command: preset.command, args: preset.args, env: {}, package: preset.package };
  }
  return undefined;
}

/** The keys of a raider entry that configure the built-in raider, which an ACP agent does not have. */
export const BUILT_IN_ONLY_KEYS = ['engine', 'provider', 'packs', 'persona'] as const;
