/**
 * A mission: one request to run a raider, from the moment the hall accepts it
 * until its run is recorded as started.
 */

/** The chat a Telegram mission came from, so the raider can answer it. */
export interface TelegramTarget {
  bot: string;
  chat_id: string | number;
  message_thread_id?: number;
}

export interface Mission {
  /** Unique across hall restarts; ties queue entries to run-ledger records. */
  id: string;
  /** The raider name asked for (plain or numbered). */
  name: string;
  /** The text handed to the raider as its one argument after `--`. */
  mission: string;
  /** An explicit session binding (telegram:, cron:, acp:, ...). */
  binding?: string;
  telegram?: TelegramTarget;
  /** Permission mode for this run, over the raider entry's (ACP session modes). */
  permission_mode?: string;
  /** Working directory for this run, inside the hall root (ACP `cwd`). */
  cwd?: string;
}

/** The keys a mission carries on disk and on the wire, in one place. */
export function missionRecord(m: Mission): Mission {
  const out: Mission = { id: m.id, name: m.name, mission: m.mission };
  if (m.binding !== undefined) out.binding = m.binding;
  if (m.telegram !== undefined) out.telegram = m.telegram;
  if (m.permission_mode !== undefined) out.permission_mode = m.permission_mode;
  if (m.cwd !== undefined) out.cwd = m.cwd;
  return out;
}
