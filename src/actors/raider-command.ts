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
 * V8's flags for a bridge the hall starts with its own Node. A bridge runs
 * per ACP run and mostly waits on its agent, so its memory counts per run,
 * not its speed: a young generation kept at its smallest (V8 grows it to
 * 8 MiB while the modules load, and never gives it back), no compiler at
 * all (`--lite-mode`, V8's interpreter only; its hot path, an update relayed
 * as an event line, stays well within an agent's pace; no WebAssembly
 * either, which the bridge does not use: said with `--no-expose-wasm`, else
 * V8 warns of it on stderr, the slot log), and one V8 worker thread (fewer
 * stacks and malloc arenas). bench/RESULTS.md, "A lean ACP bridge", has what
 * each one saves. These can only be given on the command line.
 */
export const ACP_BRIDGE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1', '--lite-mode', '--no-expose-wasm', '--v8-pool-size=1'];
const ACP_BRIDGE_NODE_FLAGS_ENV = 'RAIDER_HALL_ACP_NODE_FLAGS';

/** The bridge's V8 flags: RAIDER_HALL_ACP_NODE_FLAGS (words; empty: none) in place of ours when it is set. */
export function acpBridgeNodeFlags(env: Readonly<Record<string, string | undefined>>): string[] {
  const raw = env[ACP_BRIDGE_NODE_FLAGS_ENV];
  if (raw === undefined) return [...ACP_BRIDGE_NODE_FLAGS];
  return raw.split(/\s+/).filter((word) => word !== '');
}

/**
 * The ACP bridge (`raider acp-client`, docs/agents.md): always this
 * package's `raider`, which has it, whatever RAIDER_HALL_RAIDER_BIN names
 * (another raider program need not), started with acpBridgeNodeFlags when
 * it is started by this Node.
 */
export function resolveAcpBridgeCommand(env: Readonly<Record<string, string | undefined>>): RaiderCommand {
  const own = ownRaider(env);
  const flags = own.command === process.execPath ? acpBridgeNodeFlags(env) : [];
  return { command: own.command, prefixArgs: [...flags, ...own.prefixArgs, 'acp-client'] };
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
