/**
 * A permission question as a Telegram chat shows it (docs/telegram.md): one
 * plain-text message (tool inputs would break Markdown) with inline buttons,
 * and the text it is edited to once the question ended. A button's
 * `callback_data` names the question by a digest of its key and the answer;
 * it holds no secret: the hall checks the question is open and that the
 * press came from the very message it sent.
 */
import type { PermissionAnswerValue } from './permission.js';

export interface ChatQuestion {
  run: string;
  question: string;
  title: string;
  tool: string;
  input: Record<string, unknown>;
  reason: string;
  rule?: string;
}

export interface InlineButton {
  text: string;
  callback_data: string;
}

/** How many characters of the tool's input the message shows (a message holds 4096). */
const INPUT_SHOWN = 2500;
const CALLBACK_PREFIX = 'pq1';

const LETTERS: Readonly<Record<PermissionAnswerValue, string>> = { once: 'o', session: 's', no: 'n' };

/** `pq1:TAG:o|s|n` with a 22-character tag: 28 bytes, well under Telegram's 64. */
export function callbackData(tag: string, answer: PermissionAnswerValue): string {
  return `${CALLBACK_PREFIX}:${tag}:${LETTERS[answer]}`;
}

export function readCallbackData(data: string): { tag: string; answer: PermissionAnswerValue } | null {
  const match = /^pq1:([A-Za-z0-9_-]{22}):([osn])$/.exec(data);
  if (!match) return null;
  const letter = match[2];
  const answer = (Object.keys(LETTERS) as PermissionAnswerValue[]).find((a) => LETTERS[a] === letter);
  return answer === undefined || match[1] === undefined ? null : { tag: match[1], answer };
}

/** The question's text in the chat. */
export function questionText(q: ChatQuestion): string {
  const input = inputText(q.input);
  const lines = [`Permission question from run ${q.run}`, '', `Tool: ${q.tool}`];
  if (q.title !== '' && q.title !== q.tool) lines.push(`Wants to: ${q.title}`);
  lines.push(`Input: ${input.length > INPUT_SHOWN ? `${input.slice(0, INPUT_SHOWN)}…` : input}`);
  if (q.reason !== '') lines.push(`Reason: ${q.reason}`);
  if (q.rule !== undefined) lines.push(`"Allow for this session" adds the rule: ${q.rule}`);
  return lines.join('\n');
}

/** One button per row, so the labels stay whole on a phone; the session button only with a rule. */
export function questionKeyboard(tag: string, rule: string | undefined): InlineButton[][] {
  const buttons: InlineButton[] = [{ text: 'Allow once', callback_data: callbackData(tag, 'once') }];
  if (rule !== undefined) buttons.push({ text: 'Allow for this session', callback_data: callbackData(tag, 'session') });
  buttons.push({ text: 'Refuse', callback_data: callbackData(tag, 'no') });
  return buttons.map((b) => [b]);
}

/** Who ended a question, as the chat says it. */
export type EndedBy =
  /** A press in a chat: who pressed, by `@username` or first name when Telegram gave one. */
  | { face: 'telegram'; userId?: string; name: string | null }
  | { face: 'dashboard' | 'socket' | 'acp' | 'timeout' | 'hall' }
  /** The hall that asked in the chat stopped: a run on another hall of a shared cluster goes on asking there. */
  | { face: 'stopped' };

const ANSWER_WORDS: Readonly<Record<PermissionAnswerValue, string>> = {
  once: 'Allowed once',
  session: 'Allowed for this session',
  no: 'Refused',
};

export function endedLine(answer: PermissionAnswerValue, by: EndedBy): string {
  if (by.face === 'timeout') return 'Refused: no answer within permission_timeout.';
  if (by.face === 'hall') return 'Refused: the run ended before an answer.';
  if (by.face === 'stopped') return 'No longer asked here: the hall that asked stopped. A run on another hall can still be answered there.';
  return `${ANSWER_WORDS[answer]} ${byWords(by)}.`;
}

/** The question's text with how it ended, for the edit that also removes the buttons. */
export function endedText(q: ChatQuestion, answer: PermissionAnswerValue, by: EndedBy): string {
  return `${questionText(q)}\n\n${endedLine(answer, by)}`;
}

function byWords(by: EndedBy): string {
  if (by.face === 'telegram') return `by ${by.name ?? (by.userId !== undefined ? `user ${by.userId}` : 'someone')} in Telegram`;
  if (by.face === 'acp') return 'from the ACP client';
  return `from the ${by.face}`;
}

/** A shell command or a file path as it is; anything else as compact JSON. */
function inputText(input: Record<string, unknown>): string {
  for (const key of ['command', 'file_path', 'path']) {
    const value = input[key];
    if (typeof value === 'string' && Object.keys(input).length === 1) return value;
  }
  return JSON.stringify(input);
}
