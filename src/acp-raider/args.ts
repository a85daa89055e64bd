/**
 * The bridge's command line: the raider contract's flags (`--stream-json`,
 * `--root`, `--session`, `--permission-channel`, `--model`,
 * `--permission-mode`, `-- MISSION`), the agent session the hall recorded
 * for the session (`--agent-session`) and the session's cost at the end of
 * the binding's run before (`--agent-session-cost AMOUNT:CURRENCY`), and the agent to start
 * (`--agent-command`, `--agent-arg=ARG` repeated, `--agent-package`,
 * `--agent-start-timeout`), and the hall's MCP server for the agent's
 * sessions (`--hall-mcp-command`, `--hall-mcp-arg=ARG` repeated).
 */
import { parseArgs } from 'node:util';
import type { AcpBridgeArgvInput } from '../domain/raider-argv.js';
import { definedFields } from '../domain/defined-fields.js';
import { costOfArg } from '../domain/run-usage.js';
import { DEFAULT_WARM_IDLE_S } from '../domain/acp-agents.js';
import { errorMessage } from '../domain/error-message.js';

/** What the hall passes (domain/raider-argv.ts builds it), with the agent's command spelled out. */
export interface AcpRaiderArgs extends Omit<AcpBridgeArgvInput, 'agent'> {
  streamJson: boolean;
  command: string;
  args: string[];
  /** The npm package that provides `command`, for the message when it is not installed. */
  package?: string;
  /** Seconds the agent has to answer `initialize` and `session/new`. */
  startTimeout: number;
}

/** The start timeout when the entry sets none (`acp.start_timeout`). */
export const DEFAULT_START_TIMEOUT_S = 60;

export type ArgsResult = { ok: true; args: AcpRaiderArgs } | { ok: false; error: string };

export const ACP_RAIDER_USAGE =
  'usage: raider acp-client [--stream-json] --agent-command CMD [--agent-arg=ARG ...] [--agent-package PKG]\n' +
  '                         [--agent-start-timeout SECONDS]\n' +
  '                         [--hall-mcp-command CMD [--hall-mcp-arg=ARG ...]]\n' +
  '                         [--root DIR] [--session ID [--agent-session ID [--agent-session-cost AMOUNT:CURRENCY]]] [--model M] [--permission-mode MODE] -- MISSION';

export const ACP_SPARE_USAGE = 'usage: raider acp-client --spare [--warm-idle SECONDS]';

/** `--spare`'s own arguments: how long it waits for a run; or what is wrong with them. */
export function spareIdleSeconds(argv: readonly string[]): number | string {
  let values: { 'warm-idle'?: string };
  try {
    ({ values } = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: { 'warm-idle': { type: 'string' } } }));
  } catch (err) {
    return errorMessage(err);
  }
  const raw = values['warm-idle'];
  const seconds = raw === undefined ? DEFAULT_WARM_IDLE_S : Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) return `--warm-idle wants a number of seconds > 0, not ${JSON.stringify(raw)}`;
  return seconds;
}

export function parseAcpRaiderArgs(argv: readonly string[], cwd: string): ArgsResult {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  const { values, positionals } = parsed;
  const command = values['agent-command'];
  if (command === undefined || command === '') return { ok: false, error: '--agent-command is required' };
  const timeout = values['agent-start-timeout'];
  const startTimeout = timeout === undefined ? DEFAULT_START_TIMEOUT_S : Number(timeout);
  if (!Number.isFinite(startTimeout) || startTimeout <= 0)
    return { ok: false, error: `--agent-start-timeout wants a number of seconds > 0, not ${JSON.stringify(timeout)}` };
  const mission = positionals.join(' ').trim();
  if (mission === '') return { ok: false, error: 'no mission (it goes after --)' };
  const optional = (key: 'agent-package' | 'model' | 'permission-mode' | 'session' | 'agent-session' | 'permission-channel') => values[key];
  const pkg = optional('agent-package');
  const model = optional('model');
  const mode = optional('permission-mode');
  const session = optional('session');
  const agentSession = optional('agent-session');
  const channel = optional('permission-channel');
  const costText = values['agent-session-cost'];
  const agentSessionCost = costText === undefined ? undefined : costOfArg(costText);
  if (costText !== undefined && agentSessionCost === undefined)
    return { ok: false, error: `--agent-session-cost wants AMOUNT:CURRENCY (0.5:USD), not ${JSON.stringify(costText)}` };
  const mcpCommand = values['hall-mcp-command'];
  const hallMcp = mcpCommand !== undefined ? { command: mcpCommand, args: values['hall-mcp-arg'] ?? [] } : undefined;
  return {
    ok: true,
    args: {
      streamJson: values['stream-json'] === true,
      command,
      args: values['agent-arg'] ?? [],
      startTimeout,
      ...definedFields({ package: pkg, model, permissionMode: mode }),
      root: values.root ?? cwd,
      ...definedFields({ session, agentSession, agentSessionCost, permissionChannel: channel, hallMcp }),
      mission,
    },
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      'stream-json': { type: 'boolean' },
      'agent-command': { type: 'string' },
      'agent-arg': { type: 'string', multiple: true },
      'agent-package': { type: 'string' },
      'agent-start-timeout': { type: 'string' },
      model: { type: 'string', short: 'm' },
      'permission-mode': { type: 'string' },
      root: { type: 'string', short: 'r' },
      session: { type: 'string' },
      'agent-session': { type: 'string' },
      'agent-session-cost': { type: 'string' },
      'permission-channel': { type: 'string' },
      'hall-mcp-command': { type: 'string' },
      'hall-mcp-arg': { type: 'string', multiple: true },
    },
  });
}
