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

/**
 * The longest mission the hall accepts, in UTF-8 bytes. A raider gets its
 * mission as one command-line argument (`-- MISSION`), and Linux refuses a
 * single argument over 128 KiB (E2BIG) only when the raider is started, after
 * the mission was accepted and maybe queued; so a longer one is refused when
 * it is submitted, with room to spare.
 */
export const MISSION_MAX_BYTES = 100_000;

/** Why a spawn's mission text is not accepted, or null when it is. */
export function missionProblem(mission: string): string | null {
  if (mission.trim() === '') return 'spawn requires a mission: it is empty';
  // A UTF-16 unit is at most 3 UTF-8 bytes: a short mission needs no encoding to be counted.
  if (mission.length * 3 <= MISSION_MAX_BYTES) return null;
  return missionSizeProblem(new TextEncoder().encode(mission).length);
}

/** Why a mission of this many UTF-8 bytes is not accepted, or null when its size is fine. */
export function missionSizeProblem(bytes: number): string | null {
  if (bytes <= MISSION_MAX_BYTES) return null;
  return `the mission is ${bytes} bytes; the hall accepts at most ${MISSION_MAX_BYTES} (a raider gets it as one command-line argument): put the long part in a file and name the file in the mission`;
}

/**
 * When the hall took a mission, read back from its id (`m` + epoch
 * milliseconds in base 36 + `-` + random digits, see newMissionId);
 * undefined for an id made some other way.
 */
export function missionTakenAt(id: string): number | undefined {
  const digits = /^m([0-9a-z]{1,11})-/.exec(id)?.[1];
  if (digits === undefined) return undefined;
  const ms = Number.parseInt(digits, 36);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** A queue split by a predicate: the missions it keeps and those it lets go, each in order. */
export function splitQueue(queue: Iterable<Mission>, leaves: (m: Mission) => boolean): { kept: Mission[]; left: Mission[] } {
  const kept: Mission[] = [];
  const left: Mission[] = [];
  for (const m of queue) (leaves(m) ? left : kept).push(m);
  return { kept, left };
}

/**
 * The queue with the mission of this id first; `from` is its place before
 * (1 first). No entry when the mission does not wait in this queue.
 */
export function toFront(queue: readonly Mission[], missionId: string): { queue: Mission[]; entry?: Mission; from?: number } {
  const i = queue.findIndex((m) => m.id === missionId);
  const entry = queue[i];
  if (entry === undefined) return { queue: [...queue] };
  return { queue: [entry, ...queue.slice(0, i), ...queue.slice(i + 1)], entry, from: i + 1 };
}
