/**
 * Where an accepted Telegram message goes: the raider routed
 * for its chat, else the `'*'` default, else nowhere (it is still stored and
 * announced). Its binding is the chat, or the forum topic, so a conversation
 * continues across messages; `/new` starts it over.
 */

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
