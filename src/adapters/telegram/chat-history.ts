/**
 * Per-chat history:
 * `.raider-hall/state/telegram/BOT/CHAT_ID.json`, a JSON array of the raw
 * accepted updates of the chat (its topics share the file), rewritten
 * atomically. Unlike the reference it keeps only the newest updates
 * (HISTORY_LIMIT), so a busy chat's file does not grow without bound.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../storage/atomic-file.js';
import { errorCode } from '../../domain/error-message.js';

export const HISTORY_LIMIT = 1000;

export class ChatHistory {
  /** One write at a time per file, in arrival order. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    private readonly dir: string,
    private readonly limit: number = HISTORY_LIMIT,
  ) {}

  file(bot: string, chatId: number | string): string {
    return path.join(this.dir, bot, `${String(chatId)}.json`);
  }

  append(bot: string, chatId: number | string, update: unknown): Promise<void> {
    const file = this.file(bot, chatId);
    const previous = this.chains.get(file) ?? Promise.resolve();
    const next = previous.then(() => this.write(file, update));
    const tail = next.catch(() => {});
    this.chains.set(file, tail);
    void tail.then(() => {
      if (this.chains.get(file) === tail) this.chains.delete(file);
    });
    return next;
  }

  private async write(file: string, update: unknown): Promise<void> {
    let updates: unknown[] = [];
    try {
      const parsed: unknown = JSON.parse(await fs.promises.readFile(file, 'utf8'));
      if (Array.isArray(parsed)) updates = parsed;
    } catch (err) {
      // A missing file starts the history; an unreadable one is started over rather than blocking the chat.
      if (errorCode(err) !== 'ENOENT' && !(err instanceof SyntaxError)) throw err;
    }
    updates.push(update);
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, `${JSON.stringify(updates.slice(-this.limit))}\n`);
  }
}
