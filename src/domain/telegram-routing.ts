/**
 * Where an accepted Telegram message goes: the raider routed
 * for its chat, else the `'*'` default, else nowhere (it is still stored and
 * announced). Its binding is the chat, or the forum topic, so a conversation
 * continues across messages; `/new` starts it over.
 */
import { definedFields } from './defined-fields.js';

export const DEFAULT_ROUTE = '*';

/** The confirmation `/new` sends into the chat or topic. */
export const NEW_SESSION_TEXT = 'Started a new session.';

export function routeFor(routing: Readonly<Record<string, string>>, chatId: number | string): string | null {
  return routing[String(chatId)] ?? routing[DEFAULT_ROUTE] ?? null;
}

/** `telegram:BOT:CHAT_ID`, or `telegram:BOT:CHAT_ID:THREAD` for a forum topic. */
export function telegramBinding(bot: string, chatId: number | string, threadId?: number): string {
  return `telegram:${bot}:${String(chatId)}${threadId !== undefined ? `:${threadId}` : ''}`;
}

/** The chat (and topic) of a binding `telegram:BOT:CHAT_ID[:THREAD]`, or null for any other binding. */
export function readTelegramBinding(binding: string | undefined): { bot: string; chatId: string; threadId?: number } | null {
  const match = binding === undefined ? null : /^telegram:([^:]+):(-?\d+)(?::(\d+))?$/.exec(binding);
  if (!match || match[1] === undefined || match[2] === undefined) return null;
  return { bot: match[1], chatId: match[2], ...(match[3] !== undefined ? { threadId: Number(match[3]) } : {}) };
}

/**
 * What a shared cluster calls a bot's `questions_chat` where it says which
 * hall asks there (the one that polls the bot): `telegram:BOT:questions`,
 * never a chat's binding (a chat id is a number).
 */
export function questionsChatBinding(bot: string): string {
  return `telegram:${bot}:questions`;
}

/** The bot of a questionsChatBinding, or null for any other binding. */
export function readQuestionsChatBinding(binding: string | undefined): string | null {
  return (binding === undefined ? null : /^telegram:([^:]+):questions$/.exec(binding)?.[1]) ?? null;
}

/** The keys of a bot that say where it asks permission questions (docs/telegram.md). */
export interface QuestionKeys {
  name: string;
  questions: boolean;
  questions_chat?: string;
  questions_thread?: number;
}

/**
 * Where `bot` asks the permission questions of a run of this binding: the
 * run's chat (or topic) when it came from one of the bot's chats and the bot
 * has `questions`; its `questions_chat` when the run came from no chat, or
 * when the binding is this bot's questionsChatBinding; null otherwise (a chat
 * of another bot, another bot's questions chat).
 */
export function questionChatOf(bot: QuestionKeys, binding: string | undefined): { chatId: string; threadId?: number } | null {
  const chat = readTelegramBinding(binding);
  if (chat !== null)
    return chat.bot === bot.name && bot.questions ? { chatId: chat.chatId, ...definedFields({ threadId: chat.threadId }) } : null;
  const toQuestionsChat = readQuestionsChatBinding(binding);
  if (bot.questions_chat === undefined || (toQuestionsChat !== null && toQuestionsChat !== bot.name)) return null;
  return { chatId: bot.questions_chat, ...definedFields({ threadId: bot.questions_thread }) };
}

/**
 * The mission id of an update's mission: the same for a re-delivered update,
 * so one that is still waiting or running is recognised and not run twice.
 * The bot's numeric id (the token's prefix) keeps two tokens under one name apart.
 */
export function telegramMissionId(bot: string, botId: string, updateId: number): string {
  return `tg-${bot}-${botId}-${updateId}`;
}

/** The bot's numeric id, the part of a token before the colon (not secret). */
export function botIdOf(token: string): string {
  const id = /^(\d+):/.exec(token)?.[1];
  return id ?? 'x';
}
