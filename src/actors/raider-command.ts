/**
 * Which raider executable the hall starts: RAIDER_HALL_RAIDER_BIN when it is
 * executable, else this package's own `raider`, else `raider` on PATH; and
 * how it starts the ACP bridge for an entry with an ACP agent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RaiderCommand } from './run-environment.js';

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export function resolveRaiderCommand(env: Readonly<Record<string, string | undefined>>): RaiderCommand {
  const fromEnv = env.RAIDER_HALL_RAIDER_BIN;
  if (fromEnv && executable(fromEnv)) return { command: path.resolve(fromEnv), prefixArgs: [] };
  return ownRaider(env);
}

/**
 * The ACP bridge (`raider acp-client`, docs/agents.md): always this
 * package's `raider`, which has it, whatever RAIDER_HALL_RAIDER_BIN names
 * (another raider program need not).
 */
export function resolveAcpBridgeCommand(env: Readonly<Record<string, string | undefined>>): RaiderCommand {
  const own = ownRaider(env);
  return { command: own.command, prefixArgs: [...own.prefixArgs, 'acp-client'] };
}

/** The hall's MCP server on stdio (`raider hall mcp ROOT`, docs/mcp.md), as an ACP agent's session gets it. */
export function resolveHallMcpCommand(env: Readonly<Record<string, string | undefined>>): RaiderCommand {
  const own = ownRaider(env);
  return { command: own.command, prefixArgs: [...own.prefixArgs, 'hall', 'mcp'] };
}

function ownRaider(env: Readonly<Record<string, string | undefined>>): RaiderCommand {
  const own = fileURLToPath(new URL('../../bin/raider', import.meta.url));
  // Our own raider is a Node script: start it with this Node, skipping the `env node` lookup.
  if (fs.existsSync(own)) return { command: process.execPath, prefixArgs: [own] };
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir !== '' && executable(path.join(dir, 'raider'))) return { command: path.join(dir, 'raider'), prefixArgs: [] };
  }
  throw new Error("Cannot find 'raider' binary (set RAIDER_HALL_RAIDER_BIN or put it in $PATH)");
}
