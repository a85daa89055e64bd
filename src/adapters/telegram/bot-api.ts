/**
 * The Bot API client: the only file that knows telegraf. The hall uses its
 * HTTP client alone (no Telegraf bot, no middleware): getUpdates for the
 * hall's own poll loop and sendMessage (with inline buttons), editMessageText, answerCallbackQuery and sendChatAction, against `api_root` (api.telegram.org,
 * a self-hosted Bot API server, or a test server). Every failure comes out
 * as a BotApiError with the status and `retry_after` Telegram gave, and
 * without the token in its text.
 */
import { Telegram, TelegramError } from 'telegraf';
import type { ApiFailure } from '../../domain/telegram-retry.js';
import type { InlineButton } from '../../domain/telegram-question.js';
import type { TelegramBotConfig } from '../../ports/hall-config.js';
import { errorMessage } from '../../domain/error-message.js';
import { definedFields } from '../../domain/defined-fields.js';

export interface OutgoingMessage {
  chat_id: number | string;
  text: string;
  message_thread_id?: number;
  parse_mode?: 'Markdown';
  /** Inline buttons under the message (a permission question's answers). */
  reply_markup?: { inline_keyboard: InlineButton[][] };
}

/** The new text of a message the bot sent; without reply_markup its buttons go. */
export interface EditedMessage {
  chat_id: number | string;
  message_id: number;
  text: string;
}

export interface BotApi {
  /** One long poll; resolves with the raw updates (checked by the caller). */
  getUpdates(params: { offset?: number; timeoutS: number }, signal: AbortSignal): Promise<unknown[]>;
  sendMessage(message: OutgoingMessage, signal?: AbortSignal): Promise<{ message_id: number }>;
  editMessageText(edit: EditedMessage, signal?: AbortSignal): Promise<unknown>;
  /** The answer to a button press: a short notice the presser sees. */
  answerCallbackQuery(answer: { callback_query_id: string; text?: string }, signal?: AbortSignal): Promise<unknown>;
  /** Shows `typing` in a chat (or topic) for about five seconds. */
  sendChatAction(
    action: { chat_id: number | string; action: 'typing'; message_thread_id?: number },
    signal?: AbortSignal,
  ): Promise<unknown>;
}

/** One configured bot with its client. */
export interface BotParts {
  bot: TelegramBotConfig;
  /** The token's numeric prefix. */
  botId: string;
  api: BotApi;
}

export class BotApiError extends Error implements ApiFailure {
  constructor(
    readonly description: string,
    readonly status?: number,
    readonly retryAfterS?: number,
    /** The request was aborted (the hall stops, or the client-side timeout). */
    readonly aborted = false,
  ) {
    super(status !== undefined ? `${status}: ${description}` : description);
  }
}

/** How much longer than the long-poll timeout the client waits for an answer. */
const CLIENT_SLACK_MS = 15_000;

export function createBotApi(token: string, apiRoot: string): BotApi {
  const client = new Telegram(token, { apiRoot });
  const call = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      throw toBotApiError(err, token);
    }
  };
  return {
    getUpdates: ({ offset, timeoutS }, signal) => {
      // The client gives up a little after the server should have answered, so a dead connection cannot hang the loop.
      const both = AbortSignal.any([signal, AbortSignal.timeout(timeoutS * 1000 + CLIENT_SLACK_MS)]);
      return call(() =>
        client.callApi(
          'getUpdates',
          {
            timeout: timeoutS,
            allowed_updates: ['message', 'edited_message', 'callback_query'],
            ...definedFields({ offset }),
          },
          // telegraf types its signal with the abort-controller polyfill; Node's own one is what node-fetch checks for.
          { signal: both as never },
        ),
      ) as Promise<unknown[]>;
    },
    sendMessage: (message, signal) =>
      call(() => client.callApi('sendMessage', message as never, signal ? { signal: signal as never } : {})) as Promise<{
        message_id: number;
      }>,
    editMessageText: (edit, signal) =>
      call(() => client.callApi('editMessageText', edit as never, signal ? { signal: signal as never } : {})),
    answerCallbackQuery: (answer, signal) =>
      call(() => client.callApi('answerCallbackQuery', answer as never, signal ? { signal: signal as never } : {})),
    sendChatAction: (action, signal) =>
      call(() => client.callApi('sendChatAction', action as never, signal ? { signal: signal as never } : {})),
  };
}

function toBotApiError(err: unknown, token: string): BotApiError {
  const redact = (text: string) => (token ? text.split(token).join('[token]') : text);
  if (err instanceof TelegramError) {
    const retryAfter = err.parameters?.retry_after;
    return new BotApiError(
      redact(err.description || `error ${err.code}`),
      err.code,
      typeof retryAfter === 'number' ? retryAfter : undefined,
    );
  }
  const name = err instanceof Error ? err.name : undefined;
  // node-fetch's abort error carries `type: 'aborted'`.
  const type = typeof err === 'object' && err !== null && 'type' in err ? err.type : undefined;
  const aborted = name === 'AbortError' || name === 'TimeoutError' || type === 'aborted';
  return new BotApiError(redact(errorMessage(err)), undefined, undefined, aborted);
}
