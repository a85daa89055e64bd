/** The command line and environment the hall starts a raider with. */
import type { AcpAgentCommand } from './acp-agents.js';
import { type Cost, costArg } from './run-usage.js';

export interface RaiderEntryFields {
  engine?: string;
  provider?: string;
  model?: string;
  persona?: string;
  packs?: readonly string[];
  permission_mode?: string;
}

export interface RaiderArgvInput {
  entry: RaiderEntryFields;
  /** Absolute path of the lib target, passed as `-o preferred_lib_target=`. */
  libTarget: string;
  root: string;
  session?: string;
  /** Overrides the entry's permission mode (an ACP session's mode). */
  permissionMode?: string;
  permissionChannel?: string;
  mission: string;
}

/** The arguments after the raider executable. */
export function raiderArgv(input: RaiderArgvInput): string[] {
  const { entry } = input;
  const argv = ['--stream-json'];
  if (entry.engine) argv.push('--engine', entry.engine);
  if (entry.provider) argv.push('--provider', entry.provider);
  if (entry.model) argv.push('--model', entry.model);
  for (const pack of packList(entry)) argv.push('--pack', pack);
  const mode = input.permissionMode ?? entry.permission_mode;
  if (mode) argv.push('--permission-mode', mode);
  argv.push('-o', `preferred_lib_target=${input.libTarget}`);
  argv.push('--root', input.root);
  if (input.session !== undefined) argv.push('--session', input.session);
  if (input.permissionChannel !== undefined) argv.push('--permission-channel', input.permissionChannel);
  argv.push('--', input.mission);
  return argv;
}

/**
 * What the ACP bridge is started with. It sets `model` and `permissionMode`
 * on the agent's session (docs/agents.md, "Mode and model"); a bound run
 * has its hall `session` and, once the binding's agent opened one, the
 * `agentSession` the hall recorded for it, to continue, with the session's
 * cost at the end of the binding's run before (`agentSessionCost`, when the
 * agent said one) for the run to say its own share (docs/agents.md,
 * "Sessions across runs"); its agent's permission questions go to
 * `permissionChannel`.
 */
export interface AcpBridgeArgvInput {
  agent: AcpAgentCommand;
  model?: string;
  permissionMode?: string;
  root: string;
  session?: string;
  agentSession?: string;
  agentSessionCost?: Cost;
  permissionChannel?: string;
  /** The hall's MCP server on stdio, for the agent's `mcpServers` (docs/agents.md, "The hall's tools"). */
  hallMcp?: { command: string; args: readonly string[] };
  mission: string;
}

/** The arguments of the ACP bridge after `raider acp-client` (src/acp-raider/args.ts). */
export function acpBridgeArgv(input: AcpBridgeArgvInput): string[] {
  const argv = ['--stream-json', '--agent-command', input.agent.command];
  // `=` keeps an argument that starts with a dash (`--acp`) from reading as a flag.
  for (const arg of input.agent.args) argv.push(`--agent-arg=${arg}`);
  if (input.agent.package !== undefined) argv.push('--agent-package', input.agent.package);
  if (input.agent.start_timeout !== undefined) argv.push('--agent-start-timeout', String(input.agent.start_timeout));
  if (input.model !== undefined) argv.push('--model', input.model);
  if (input.permissionMode !== undefined) argv.push('--permission-mode', input.permissionMode);
  argv.push('--root', input.root);
  if (input.session !== undefined) argv.push('--session', input.session);
  if (input.agentSession !== undefined) argv.push('--agent-session', input.agentSession);
  if (input.agentSession !== undefined && input.agentSessionCost !== undefined)
    argv.push('--agent-session-cost', costArg(input.agentSessionCost));
  if (input.permissionChannel !== undefined) argv.push('--permission-channel', input.permissionChannel);
  if (input.hallMcp !== undefined) {
    argv.push('--hall-mcp-command', input.hallMcp.command);
    for (const arg of input.hallMcp.args) argv.push(`--hall-mcp-arg=${arg}`);
  }
  argv.push('--', input.mission);
  return argv;
}

/** The entry's packs in order, then its persona unless it is already listed. */
export function packList(entry: RaiderEntryFields): string[] {
  const packs = [...(entry.packs ?? [])];
  if (entry.persona && !packs.includes(entry.persona)) packs.push(entry.persona);
  return packs;
}

export interface RaiderEnvInput {
  root: string;
  slot: string;
  /** The raider entry of the hall's config the run uses (`bjorn` for the slot `1bjorn`), named whether it is written or not. */
  entry: string;
  /** The hall's config file, where that entry is (or would be) written. */
  configPath: string;
  runId: string;
  socketPath: string;
  libTarget: string;
  longhouse: boolean;
  telegram?: { bot: string; chat_id: string | number; message_thread_id?: number };
}

const TELEGRAM_VARS = ['RAIDER_HALL_TELEGRAM_BOT', 'RAIDER_HALL_TELEGRAM_CHAT_ID', 'RAIDER_HALL_TELEGRAM_THREAD_ID'];

/** What a raider the hall starts has of the hall's environment: all of it but the Telegram variables (a run's own binding says those). */
export function inheritedEnv(base: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !TELEGRAM_VARS.includes(key)) env[key] = value;
  }
  return env;
}

/** The hall's environment without the Telegram variables, plus the run's own. */
export function raiderEnv(base: Readonly<Record<string, string | undefined>>, input: RaiderEnvInput): Record<string, string> {
  const env = inheritedEnv(base);
  env.RAIDER_HALL_MODE = '1';
  env.RAIDER_HALL_ROOT = input.root;
  env.RAIDER_HALL_SLOT = input.slot;
  // Where the raider's own advice points: a setting missing from the run is the hall entry's to give.
  env.RAIDER_HALL_ENTRY = input.entry;
  env.RAIDER_HALL_CONFIG = input.configPath;
  env.RAIDER_HALL_SOCKET = input.socketPath;
  // Lets a restarted hall recognise its raiders among the live processes.
  env.RAIDER_HALL_RUN_ID = input.runId;
  const libs = [`${input.libTarget}/lib/perl5`];
  if (input.longhouse) libs.push(`${input.root}/longhouse/lib`);
  env.PERL5LIB = [base.PERL5LIB, ...libs].filter((p) => p !== undefined && p !== '').join(':');
  if (input.telegram) {
    env.RAIDER_HALL_TELEGRAM_BOT = input.telegram.bot;
    env.RAIDER_HALL_TELEGRAM_CHAT_ID = String(input.telegram.chat_id);
    if (input.telegram.message_thread_id !== undefined) {
      env.RAIDER_HALL_TELEGRAM_THREAD_ID = String(input.telegram.message_thread_id);
    }
  }
  return env;
}
