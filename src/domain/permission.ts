/**
 * The permission channel between a raider and the hall: the raider
 * asks about a tool call its policy cannot decide; a person answers through
 * whatever surface registered for the run's binding (ACP today).
 */
import { isRecord } from './records.js';

/** How freely a raider acts without asking: its flag, its config and the hall's raider entries all take these. */
export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'auto', 'bypassPermissions'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export type PermissionAnswerValue = 'once' | 'session' | 'no';

/** raider → hall */
export interface PermissionQuestion {
  type: 'ask';
  id: string;
  tool: string;
  input: Record<string, unknown>;
  title: string;
  /** ACP tool kind: read, edit, delete, move, search, execute, think, fetch, other. */
  kind: string;
  reason: string;
  /** The rule that would name this call (`Bash(git status)`), when one can. */
  rule?: string;
  /** The stream-json call id (`c1`) of the tool call asked about, when the raider sends it. */
  call?: string;
}

/** hall → raider */
export interface PermissionAnswer {
  type: 'answer';
  id: string;
  answer: PermissionAnswerValue;
  reason: string;
}

/** Reads one `ask` line; null for anything else (which gets no answer but a log line). */
export function parseQuestion(value: unknown): PermissionQuestion | null {
  if (!isRecord(value) || value.type !== 'ask' || typeof value.id !== 'string' || value.id === '') return null;
  const str = (v: unknown, fallback: string) => (typeof v === 'string' ? v : fallback);
  const tool = str(value.tool, 'tool');
  return {
    type: 'ask',
    id: value.id,
    tool,
    input: isRecord(value.input) ? value.input : {},
    title: str(value.title, tool),
    kind: str(value.kind, 'other'),
    reason: str(value.reason, ''),
    ...(typeof value.rule === 'string' && value.rule !== '' ? { rule: value.rule } : {}),
    ...(typeof value.call === 'string' && value.call !== '' ? { call: value.call } : {}),
  };
}

export function refusal(id: string, reason: string): PermissionAnswer {
  return { type: 'answer', id, answer: 'no', reason };
}

/** A face that answers permission questions: an ACP client, the dashboard, the control socket, a Telegram chat. */
export type AnswerFace = 'acp' | 'dashboard' | 'socket' | 'telegram';

/** What decided a question: a face, or its permission_timeout running out with no answer. */
export type DecidedBy = AnswerFace | 'timeout';

/** How a decider reads after "answered once/session/no": "from the socket", "for want of an answer in time". */
export function decidedByText(by: DecidedBy): string {
  return by === 'timeout' ? 'with no answer within permission_timeout' : `from the ${by}`;
}

/**
 * The abort reason of a question's signal when another face answered it
 * first (a run an ACP client watches, with dashboard.questions on): the
 * losing face withdraws its question and can say who answered.
 */
export interface AnsweredElsewhere {
  type: 'answered_elsewhere';
  answer: PermissionAnswerValue;
  face: DecidedBy;
}

export function isAnsweredElsewhere(value: unknown): value is AnsweredElsewhere {
  return isRecord(value) && value.type === 'answered_elsewhere';
}
