/**
 * The commands a person steers a chat's runs with (`/new`, `/status`,
 * `/cancel`, `/queue`) and the texts the hall answers them with. Any other
 * `/word` is an ordinary mission.
 */
import { formatAge } from './format-age.js';

export type ChatCommand = 'new' | 'status' | 'cancel' | 'queue';

/** A chat's running run, as its commands show it. */
export interface ChatRun {
  id: string;
  raider: string;
  /** Epoch milliseconds. */
  startedAt: number;
}

/** A mission waiting for the chat's binding. */
export interface ChatWaiting {
  id: string;
  mission: string;
}

/** How much of a waiting mission's text `/queue` shows. */
const MISSION_PREVIEW = 60;

/**
 * The command a message is, optionally addressed to a bot (`/status@name_bot`),
 * with nothing else but spaces: `/newer ideas` and `/status now` are missions.
 */
export function chatCommand(text: string): ChatCommand | null {
  const match = /^\s*\/(new|status|cancel|queue)(@\w+)?\s*$/.exec(text);
  const word = match?.[1];
  return word === 'new' || word === 'status' || word === 'cancel' || word === 'queue' ? word : null;
}

export function statusText(run: ChatRun | null, waiting: number, now: number): string {
  const queued = `${waiting} ${waiting === 1 ? 'mission waits' : 'missions wait'} for this chat.`;
  if (run === null) return `Nothing is running. ${queued}`;
  return `Running: ${run.id} (${run.raider}) for ${formatAge(Math.max(0, now - run.startedAt) / 1000)}. ${queued}`;
}

export function queueText(waiting: readonly ChatWaiting[]): string {
  if (waiting.length === 0) return 'Nothing waits for this chat.';
  const lines = waiting.map((m, i) => `${i + 1}. ${m.id}: ${preview(m.mission)}`);
  return [`${waiting.length} waiting:`, ...lines].join('\n');
}

export function cancellingText(runId: string): string {
  return `Cancelling ${runId}.`;
}

export const NOTHING_TO_CANCEL_TEXT = 'Nothing is running; nothing to cancel.';

export function cancelFailedText(runId: string, error: string): string {
  return `Could not cancel ${runId}: ${error}`;
}

function preview(mission: string): string {
  const line = mission.replace(/\s+/g, ' ').trim();
  return line.length > MISSION_PREVIEW ? `${line.slice(0, MISSION_PREVIEW - 1)}…` : line;
}
