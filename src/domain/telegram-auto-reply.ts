/**
 * What `auto_reply` sends into a chat when its run ends (docs/telegram.md),
 * and the record the hall keeps of it per run (state namespace
 * `telegram_auto_reply`), so the reply goes once across a restart.
 */
import { z } from 'zod';

/** How much of a failed run's error goes to the chat. */
export const AUTO_REPLY_ERROR_LIMIT = 300;

const AutoReplyRecordSchema = z.discriminatedUnion('state', [
  /** The raider sent text to the chat itself during the run: the hall sends nothing. */
  z.object({ state: z.literal('replied') }),
  /** To be sent: `parts_sent` of the text's parts already went. */
  z.object({
    state: z.literal('pending'),
    bot: z.string(),
    chat_id: z.string(),
    thread_id: z.number().int().optional(),
    text: z.string(),
    parts_sent: z.number().int().nonnegative(),
  }),
  z.object({ state: z.literal('sent') }),
  /** Telegram refused it for good (or the bot is gone): not tried again. */
  z.object({ state: z.literal('dropped'), error: z.string() }),
]);

export type AutoReplyRecord = z.infer<typeof AutoReplyRecordSchema>;

export function readAutoReplyRecord(value: unknown): AutoReplyRecord | null {
  const parsed = AutoReplyRecordSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * The text for the chat: a completed run's response (as JSON when it is no
 * text), else a short line with how the run ended and the start of its
 * error; null when a completed run answered nothing.
 */
export function autoReplyText(status: string, response: unknown, error: string | undefined): string | null {
  if (status === 'completed') {
    if (response === undefined || response === null) return null;
    const text = typeof response === 'string' ? response : JSON.stringify(response);
    return text.trim() === '' ? null : text;
  }
  if (error === undefined || error.trim() === '') return `Run ${status}.`;
  const brief = error.length > AUTO_REPLY_ERROR_LIMIT ? `${error.slice(0, AUTO_REPLY_ERROR_LIMIT - 1)}…` : error;
  return `Run ${status}: ${brief}`;
}
