/**
 * What the hall reads from a Telegram update: a button press
 * (`callback_query`), the `message`, else the `edited_message`; other kinds
 * are ignored (the offset still moves
 * past them). A thread id is kept only for a forum-topic message: replies in
 * the General topic and reply threads of ordinary groups carry a
 * `message_thread_id` too, and sending to it fails with "message thread not
 * found".
 */
import { isRecord } from './records.js';

export interface TelegramMessage {
  /** As Telegram sent it (a number); compared as a string. */
  chatId: number | string;
  chatType: string | null;
  /** Absent for messages without a sender (channel posts, anonymous admins). */
  fromId?: number | string;
  firstName: string | null;
  username: string | null;
  /** The text, or a media caption; '' when there is neither. */
  text: string;
  /** The forum topic, only for topic messages. */
  threadId?: number;
}

/** A press on an inline button of a message the bot sent. */
export interface TelegramPress {
  /** What answerCallbackQuery names. */
  queryId: string;
  fromId?: number | string;
  firstName: string | null;
  username: string | null;
  /** The chat and message the button is under. */
  chatId: number | string;
  messageId: number;
  data: string;
}

export type ReadUpdate =
  | { kind: 'message'; updateId: number; message: TelegramMessage }
  | { kind: 'press'; updateId: number; press: TelegramPress }
  | { kind: 'ignored'; updateId: number }
  | { kind: 'invalid'; updateId: number | null; error: string };

const isId = (v: unknown): v is number | string =>
  (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^-?\d{1,20}$/.test(v));

export function readUpdate(raw: unknown): ReadUpdate {
  if (!isRecord(raw) || typeof raw.update_id !== 'number' || !Number.isSafeInteger(raw.update_id) || raw.update_id < 0) {
    return { kind: 'invalid', updateId: null, error: 'an update without a valid update_id' };
  }
  const updateId = raw.update_id;
  if (isRecord(raw.callback_query)) return readPress(updateId, raw.callback_query);
  const msg = isRecord(raw.message) ? raw.message : isRecord(raw.edited_message) ? raw.edited_message : null;
  if (msg === null) return { kind: 'ignored', updateId };
  const chat = isRecord(msg.chat) ? msg.chat : null;
  if (chat === null || !isId(chat.id)) return { kind: 'invalid', updateId, error: 'a message without chat.id' };
  const from = isRecord(msg.from) ? msg.from : null;
  const text = typeof msg.text === 'string' ? msg.text : typeof msg.caption === 'string' ? msg.caption : '';
  const thread = msg.is_topic_message === true && typeof msg.message_thread_id === 'number' && Number.isSafeInteger(msg.message_thread_id);
  const message: TelegramMessage = {
    chatId: chat.id,
    chatType: typeof chat.type === 'string' ? chat.type : null,
    firstName: from && typeof from.first_name === 'string' ? from.first_name : null,
    username: from && typeof from.username === 'string' ? from.username : null,
    text,
  };
  if (from && isId(from.id)) message.fromId = from.id;
  if (thread) message.threadId = msg.message_thread_id as number;
  return { kind: 'message', updateId, message };
}

function readPress(updateId: number, query: Record<string, unknown>): ReadUpdate {
  const msg = isRecord(query.message) ? query.message : null;
  const chat = msg && isRecord(msg.chat) ? msg.chat : null;
  // A press without an id cannot be answered; one on an inline message (no chat) or with no data is none of the hall's buttons.
  if (
    typeof query.id !== 'string' ||
    query.id === '' ||
    msg === null ||
    chat === null ||
    !isId(chat.id) ||
    typeof msg.message_id !== 'number' ||
    typeof query.data !== 'string'
  ) {
    return { kind: 'ignored', updateId };
  }
  const from = isRecord(query.from) ? query.from : null;
  const press: TelegramPress = {
    queryId: query.id,
    firstName: from && typeof from.first_name === 'string' ? from.first_name : null,
    username: from && typeof from.username === 'string' ? from.username : null,
    chatId: chat.id,
    messageId: msg.message_id,
    data: query.data,
  };
  if (from && isId(from.id)) press.fromId = from.id;
  return { kind: 'press', updateId, press };
}
