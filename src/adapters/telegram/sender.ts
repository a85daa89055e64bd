/**
 * Sending text into a chat or topic (telegram_reply, the /new confirmation):
 * split at 4096 characters, each part sent as Markdown like the reference,
 * retried as SendStep says (retry_after, server errors; plain text when the
 * Markdown does not parse; the chat itself when the topic is gone). The
 * answer comes once Telegram accepted every part, or with the error; a
 * failure is also published as `telegram.send_error`.
 */
import type { HallServices } from '../../ports/hall-services.js';
import { splitMessage } from '../../domain/telegram-split.js';
import { sendRetry, type SendPolicy, type SendStep } from '../../domain/telegram-retry.js';
import { BotApiError, type BotApi, type EditedMessage, type OutgoingMessage } from './bot-api.js';
import { errorMessage } from '../../domain/error-message.js';

export interface SendTarget {
  chat_id: number | string;
  message_thread_id?: number;
}

interface RetryHow {
  policy: SendPolicy;
  /** Asked before each attempt: false ends the send unsent. */
  wanted: () => boolean;
  /** Aborted once the message is no longer wanted: a retry wait ends at once. */
  unwanted: AbortSignal;
}

/** The message stopped being wanted before Telegram took it. */
class NotWanted extends Error {
  constructor() {
    super('no longer wanted');
  }
}

export type SendResult = { ok: true; message_ids: number[] } | { ok: false; error: string };

export class TelegramSender {
  constructor(
    private readonly services: Pick<HallServices, 'publish'>,
    private readonly policy: SendPolicy,
    /** Aborted when the hall stops: a retry wait ends at once (a request under way is let finish). */
    private readonly signal: AbortSignal,
  ) {}

  async send(bot: string, api: BotApi, target: SendTarget, text: string): Promise<SendResult> {
    const parts = splitMessage(text);
    const ids: number[] = [];
    for (const [i, part] of parts.entries()) {
      try {
        ids.push(await this.sendPart(api, target, part));
      } catch (err) {
        const reason = errorMessage(err);
        const error = parts.length > 1 ? `part ${i + 1} of ${parts.length} not sent: ${reason}` : reason;
        this.services.publish({ type: 'telegram.send_error', bot, chat_id: target.chat_id, error });
        return { ok: false, error };
      }
    }
    return { ok: true, message_ids: ids };
  }

  /**
   * One message as it is (a permission question with its buttons), retried
   * for as long as `wanted()` holds, however many attempts that takes and
   * however long Telegram's `retry_after` (what may pass: rate limits,
   * server errors, a connection); before each attempt it asks again, and
   * `unwanted` ends a wait at once, so a message that is no longer wanted is
   * never sent late. Its id, `gone` when it stopped being wanted, or why not.
   */
  async sendWhile(
    bot: string,
    api: BotApi,
    message: OutgoingMessage,
    wanted: () => boolean,
    unwanted: AbortSignal = new AbortController().signal,
  ): Promise<{ ok: true; message_id: number } | { ok: false; gone: boolean; error: string }> {
    const policy: SendPolicy = { ...this.policy, maxAttempts: Number.POSITIVE_INFINITY, waitOutRetryAfter: true };
    try {
      return { ok: true, message_id: await this.deliver(api, { ...message }, { policy, wanted, unwanted }) };
    } catch (err) {
      if (err instanceof NotWanted || (unwanted.aborted && !this.signal.aborted))
        return { ok: false, gone: true, error: 'no longer wanted' };
      return { ...this.failed(bot, message.chat_id, err), gone: false };
    }
  }

  /** A new text for a message the bot sent, its buttons removed; retried as a send is. */
  async edit(bot: string, api: BotApi, edit: EditedMessage): Promise<{ ok: true } | { ok: false; error: string }> {
    try {
      await this.retried(
        () => api.editMessageText(edit),
        () => ({ markdown: false, thread: false }),
      );
      return { ok: true };
    } catch (err) {
      return this.failed(bot, edit.chat_id, err);
    }
  }

  private failed(bot: string, chatId: number | string, err: unknown): { ok: false; error: string } {
    const error = errorMessage(err);
    this.services.publish({ type: 'telegram.send_error', bot, chat_id: chatId, error });
    return { ok: false, error };
  }

  private sendPart(api: BotApi, target: SendTarget, text: string): Promise<number> {
    const message: OutgoingMessage = { chat_id: target.chat_id, text, parse_mode: 'Markdown' };
    if (target.message_thread_id !== undefined) message.message_thread_id = target.message_thread_id;
    return this.deliver(api, message);
  }

  /** Sends `message` (changed as the retry steps say); its id. */
  private deliver(api: BotApi, message: OutgoingMessage, how: Partial<RetryHow> = {}): Promise<number> {
    return this.retried(
      async () => (await api.sendMessage(message)).message_id,
      () => ({ markdown: message.parse_mode !== undefined, thread: message.message_thread_id !== undefined }),
      (step) => {
        if (step.kind === 'plain') delete message.parse_mode;
        else if (step.kind === 'withoutThread') delete message.message_thread_id;
      },
      how,
    );
  }

  private async retried<T>(
    call: () => Promise<T>,
    sent: () => { markdown: boolean; thread: boolean },
    adjust: (step: SendStep) => void = () => {},
    { policy = this.policy, wanted = () => true, unwanted }: Partial<RetryHow> = {},
  ): Promise<T> {
    const waitEnds = unwanted === undefined ? this.signal : AbortSignal.any([this.signal, unwanted]);
    for (let attempt = 1; ; attempt++) {
      if (!wanted()) throw new NotWanted();
      try {
        return await call();
      } catch (err) {
        if (!(err instanceof BotApiError) || err.aborted) throw err;
        const step = sendRetry(err, attempt, policy, sent());
        if (step.kind === 'fail') throw err;
        if (step.kind === 'retry') await sleep(step.delayMs, waitEnds);
        else adjust(step);
      }
    }
  }
}

/** Waits, or rejects at once when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new BotApiError('the hall is stopping', undefined, undefined, true));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new BotApiError('the hall is stopping', undefined, undefined, true));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
