/**
 * The hall's configuration as the rest of the hall sees it, once
 * `.raider-hall.yml` is read and checked (adapters/config/hall-config-schema.ts
 * holds the schema and the parser that produce it).
 */
import type { AcpPresetName, AcpSettings } from '../domain/acp-agents.js';
import type { PermissionMode } from '../domain/permission.js';
import type { WorktreeSettings } from '../domain/worktree.js';

export interface RaiderEntry {
  engine?: string;
  provider?: string;
  model?: string;
  persona?: string;
  packs: string[];
  permission_mode?: PermissionMode;
  /** Each run in a git worktree of its own (docs/worktrees.md); none = runs work in the root. */
  worktree?: WorktreeSettings;
  /** An ACP agent this entry's runs are prompt turns of (docs/agents.md); excludes the built-in raider's keys. */
  acp?: AcpSettings;
  /** A preset ACP agent: `acp` with a known adapter's command and arguments. */
  agent?: AcpPresetName;
  /** 'isolated', 'mcp' present on the entry, in that order: accepted, ignored by the hall (noted in the slot log). */
  ignoredKeys: string[];
}

export interface CronJobConfig {
  /** Defaults to `name`; the binding is `cron:ID`. */
  id: string;
  name: string;
  /** The expression, not validated here (the cron adapter does that). */
  cron: string;
  mission: string;
  coalesce: boolean;
  catch_up: 'once' | 'skip';
  tz?: string;
}

export interface TelegramBotConfig {
  name: string;
  token: string;
  allowlist: string[];
  allowed_chats: string[];
  /** chat id or '*' → raider name */
  routing: Record<string, string>;
  api_root: string;
  /** Runs whose binding is a chat of this bot ask their permission questions in that chat (docs/telegram.md). */
  questions: boolean;
  /** Where the questions of runs that did not come from a chat go too. */
  questions_chat?: string;
  /** The forum topic of questions_chat. */
  questions_thread?: number;
  /** A run of a chat whose raider sent nothing there gets its response sent by the hall; the chat shows `typing` while it runs. */
  auto_reply: boolean;
}

export interface HallConfig {
  /**
   * In the YAML's order (ACP's default is the first raider). Note: as for any
   * JS object, names made of digits only ("42") are listed before the others.
   */
  raiders: Record<string, RaiderEntry>;
  cron: CronJobConfig[];
  telegram: { api_root: string; bots: TelegramBotConfig[] } | null;
  acp: { port: number | null; host: string };
  logs: { keep_events: number; max_log_size: number };
  cancel_grace: number;
  /** The hall's worktrees as a whole (docs/worktrees.md); null = no limit. */
  worktree: { max_age: number | null; max_disk: number | null };
  permission_timeout: number;
  longhouse: boolean;
  /** Relative to the hall root; null = the default lib target. */
  preferred_lib_target: string | null;
  mcp: { enable: boolean };
  /** The web dashboard; absent = none. */
  dashboard?: DashboardConfig;
  /**
   * Which faces give runs that no editor watches a permission channel and take their questions
   * (README.md, docs/dashboard.md): the dashboard (`dashboard.questions`, the old key, counts too) and the
   * socket's `answer`. A Telegram bot's own keys say which chats ask.
   */
  questions: { dashboard: boolean; socket: boolean };
  /** Where the durable state lives: files under `.raider-hall/state` unless `postgres` names a database. */
  storage: StorageConfig;
  /** The group of halls sharing one database (several projects may share it). */
  cluster: string;
  /** This hall's name in its cluster; null = host name and root. */
  hall_id: string | null;
  /** `shared`: several halls serve the cluster, claiming missions from the database; `alone`: this hall keeps it to itself. */
  cluster_mode: 'alone' | 'shared';
  /** How long a hall of a cluster counts as alive after renewing its lease, in seconds. */
  lease_seconds: number;
  /** How many raiders this hall runs at once; null = no limit. */
  max_running: number | null;
}

export interface DashboardConfig {
  /** Where it listens, as written: `127.0.0.1:7420`, `[::1]:0`, `localhost:7420`. */
  listen: string;
  host: string;
  /** 0 = any free port. */
  port: number;
  allow_remote: boolean;
  read_only: boolean;
  /** Names besides the loopback ones that the Host header may carry. */
  hosts: string[];
  /** Runs that no ACP client watches ask their permission questions here (the page, the bus, the socket's `answer`): `questions.dashboard`, or its old alias `dashboard.questions`. */
  questions: boolean;
}

export interface StorageConfig {
  /** A postgres:// URL, `${VAR}` not yet expanded; null = the file store. */
  postgres: string | null;
}
