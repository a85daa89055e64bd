/** What the run actors need from the hall around them, passed in once at start-up. */
import type { HallConfig } from '../ports/hall-config.js';
import type { EventsFileMaker } from '../adapters/storage/events-file-maker.js';
import type { HallPaths } from '../ports/hall-paths.js';
import type { ProviderStoreView } from '../domain/refusal.js';
import type { PermissionChannels } from './permission-channels.js';
import type { BindingWorktrees } from '../adapters/storage/binding-worktrees.js';
import type { SparePool } from './warm-bridges.js';

/** How to start the raider executable: `command prefixArgs... raiderArgs...`. */
export interface RaiderCommand {
  command: string;
  prefixArgs: string[];
}

export interface RunEnvironment {
  paths: HallPaths;
  config: HallConfig;
  raider: RaiderCommand;
  /** The ACP bridge, the raider of an entry with `acp:` or `agent:` (docs/agents.md). */
  acpBridge: RaiderCommand;
  /** The hall's MCP server on stdio, given to an ACP agent's sessions with `mcp.enable` (the root is appended). */
  hallMcp: RaiderCommand;
  /** The hall's own environment, the base of every raider's. */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** Absolute lib target (`preferred_lib_target`, default ROOT/.raider/lib). */
  libTarget: string;
  /** Reads `~/.raider/config.yml` when a run with a provider is about to start. */
  providerStore: () => ProviderStoreView;
  raiderVersion: string;
  /** Opens a run's permission channel when a surface answers for its binding. */
  permissionChannels: PermissionChannels;
  /** What the hall's state store keeps (the ACP agent session of each hall session, namespace `acp_agent`). */
  kept: (ns: string, key: string) => unknown;
  /** Creates each run's events file (from a spare made ahead of time). */
  eventsFiles: EventsFileMaker;
  /** The worktree each binding goes on in (docs/worktrees.md). */
  bindingWorktrees: BindingWorktrees;
  /** The warm ACP bridges of entries that keep some (docs/agents.md, "Warm bridges"). */
  warmBridges?: Pick<SparePool, 'take'>;
  /** Diagnostics for the hall's own log. */
  warn: (message: string) => void;
}
