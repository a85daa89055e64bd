/** What the Telegram tests that start a hall share: quick poll timings, updates as Telegram sends them, a press on a question's button. */
import type { TelegramAdapterOptions } from '../../src/adapters/telegram/telegram-adapter.js';
import type { FakeRequest, Json } from './fake-bot-api.js';

/** Short long polls and backoffs, so a test does not wait out Telegram's defaults. */
export const fast: TelegramAdapterOptions = { pollTimeoutS: 5, backoff: { baseMs: 100, maxMs: 400, badTokenMs: 1000 } };

export const from = (id: number) => ({ id, is_bot: false, first_name: `user${id}`, username: `u${id}` });

export function privateMessage(user: number, text: string): Json {
  return { message: { message_id: 1, date: 0, from: from(user), chat: { id: user, type: 'private' }, text } };
}

let queries = 0;
/** A press on a button of `question` (the sendMessage that asked) by `user`. */
export function press(question: FakeRequest, user: number, label: string): Json {
  const rows = question.body.reply_markup.inline_keyboard as Array<Array<{ text: string; callback_data: string }>>;
  const button = rows.flat().find((b) => b.text === label);
  if (!button) throw new Error(`no button ${label}`);
  const chat = question.body.chat_id as number | string;
  return {
    callback_query: {
      id: `cq${++queries}`,
      from: from(user),
      chat_instance: '1',
      message: {
        message_id: question.messageId,
        date: 0,
        chat: { id: Number(chat), type: Number(chat) < 0 ? 'supergroup' : 'private' },
        ...(question.body.message_thread_id !== undefined ? { message_thread_id: question.body.message_thread_id } : {}),
        text: question.body.text,
      },
      data: button.callback_data,
    },
  };
}
