/** What the Telegram tests that start a hall share: quick poll timings and updates as Telegram sends them. */
import type { TelegramAdapterOptions } from '../../src/adapters/telegram/telegram-adapter.js';
import type { Json } from './fake-bot-api.js';

/** Short long polls and backoffs, so a test does not wait out Telegram's defaults. */
export const fast: TelegramAdapterOptions = { pollTimeoutS: 5, backoff: { baseMs: 100, maxMs: 400, badTokenMs: 1000 } };

export const from = (id: number) => ({ id, is_bot: false, first_name: `user${id}`, username: `u${id}` });

export function privateMessage(user: number, text: string): Json {
  return { message: { message_id: 1, date: 0, from: from(user), chat: { id: user, type: 'private' }, text } };
}
