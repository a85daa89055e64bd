/**
 * Answers back in the chat (bot key `auto_reply`, docs/telegram.md): while a
 * run of a chat goes, the chat shows `typing`; when it ends and its raider
 * sent nothing to that chat itself, the hall sends the run's response (a
 * failed run's error, briefly) there, in parts of Telegram's size.
 *
 * Once, across a restart too: the text is written through the hall's state
 * store (namespace `telegram_auto_reply`, one record per run) before the
 * first part goes, and each part sent is counted there, so a hall that
 * stopped between the end and the send sends what is left when it starts
 * again, and a run's end heard twice sends nothing twice. A record goes once
 * it is settled (sent, dropped, or the raider replied itself) and the run's
 * end is durable: that end cannot be heard again. What a crash left behind
 * goes at the next start.
 */
import type { Envelope } from '../../ports/bus.js';
import type { HallServices } from '../../ports/hall-services.js';
import { autoReplyText, readAutoReplyRecord, type AutoReplyRecord } from '../../domain/telegram-auto-reply.js';
import { splitMessage } from '../../domain/telegram-split.js';
import { readTelegramBinding } from '../../domain/telegram-routing.js';
import { definedFields } from '../../domain/defined-fields.js';
import type { BotParts } from './bot-api.js';
import type { TelegramSender } from './sender.js';
import { errorMessage } from '../../domain/error-message.js';

export const AUTO_REPLY_NS = 'telegram_auto_reply';

/** Telegram shows `typing` for about five seconds; it is renewed a little sooner. */
export const TYPING_RENEW_MS = 4_000;

interface LiveRun {
  bot: BotParts;
  chatId: string;
  threadId?: number;
  typing: NodeJS.Timeout;
}

export class AutoReply {
  /** The runs of auto-reply chats going on this hall, by run id. */
  private readonly live = new Map<string, LiveRun>();
  private unsubscribe: (() => void) | null = null;
  /** The replies being sent now. */
  private readonly deliveries = new Set<Promise<void>>();

  constructor(
    private readonly services: Pick<HallServices, 'bus' | 'store' | 'publish' | 'log'>,
    private readonly bots: ReadonlyMap<string, BotParts>,
    private readonly sender: TelegramSender,
    private readonly signal: AbortSignal,
  ) {}

  get wanted(): boolean {
    for (const { bot } of this.bots.values()) if (bot.auto_reply) return true;
    return false;
  }

  /** Hears runs start and end; called before the hall starts, so a run found ended at boot is heard too. */
  listen(): void {
    if (!this.wanted || this.unsubscribe !== null) return;
    this.unsubscribe = this.services.bus.subscribe({ filter: 'raider.', receive: (event) => this.hear(event) });
  }

  /** Sends what a stopped hall left unsent, and forgets the records of runs that cannot end again. */
  start(): void {
    if (!this.wanted) return;
    const records = this.services.store.state.kv.get(AUTO_REPLY_NS);
    for (const [runId, value] of [...(records?.entries() ?? [])]) {
      const record = readAutoReplyRecord(value);
      if (record?.state === 'pending') this.track(this.deliver(runId, record));
      else if (!this.services.store.state.runs.has(runId)) this.services.store.apply({ op: 'unset', ns: AUTO_REPLY_NS, key: runId });
    }
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    for (const run of this.live.values()) clearInterval(run.typing);
    this.live.clear();
  }

  /**
   * Resolves once the replies under way have recorded what Telegram took (a wait to send again ends
   * with the hall's signal): a hall that stops right after a part went does not send it again at its
   * next start.
   */
  async drained(): Promise<void> {
    await Promise.allSettled([...this.deliveries]);
  }

  private track(delivery: Promise<void>): void {
    const tracked = delivery.catch((err: unknown) => this.services.log(`Telegram: a reply could not be recorded: ${errorMessage(err)}`));
    this.deliveries.add(tracked);
    void tracked.then(() => this.deliveries.delete(tracked));
  }

  /** The raider itself sent text to this chat: the runs of the chat going now send nothing at their end. */
  noteSent(bot: string, chatId: number | string): void {
    for (const [runId, run] of this.live) {
      if (run.bot.bot.name !== bot || run.chatId !== String(chatId)) continue;
      if (this.record(runId) === null) this.services.store.apply({ op: 'set', ns: AUTO_REPLY_NS, key: runId, value: { state: 'replied' } });
    }
  }

  private hear(event: Envelope): void {
    // On a shared cluster the bus carries the other halls' runs too: each hall answers for its own.
    const shared = this.services.store.shared;
    if (shared !== undefined && event.hall !== undefined && event.hall !== shared.hallId) return;
    if (event.type === 'raider.spawned') this.started(event.id, event.binding);
    else if (event.type === 'raider.done') this.ended(event);
  }

  private chatOf(binding: string | undefined): { bot: BotParts; chatId: string; threadId?: number } | null {
    const chat = readTelegramBinding(binding);
    const bot = chat === null ? undefined : this.bots.get(chat.bot);
    if (chat === null || bot === undefined || !bot.bot.auto_reply) return null;
    return { bot, chatId: chat.chatId, ...definedFields({ threadId: chat.threadId }) };
  }

  private started(runId: string, binding: string | undefined): void {
    const chat = this.chatOf(binding);
    if (chat === null || this.live.has(runId)) return;
    const typing = () => {
      chat.bot.api
        .sendChatAction({ chat_id: chat.chatId, action: 'typing', ...definedFields({ message_thread_id: chat.threadId }) })
        .catch(() => {
          // `typing` is a courtesy: a failure is not worth a line; the reply's own send reports Telegram's trouble.
        });
    };
    typing();
    this.live.set(runId, { ...chat, typing: setInterval(typing, TYPING_RENEW_MS) });
  }

  private ended(event: Extract<Envelope, { type: 'raider.done' }>): void {
    const run = this.live.get(event.id);
    if (run !== undefined) {
      clearInterval(run.typing);
      this.live.delete(event.id);
    }
    const chat = run ?? this.chatOf(event.binding);
    if (chat === null) return;
    // A record says the raider replied, or the reply is already under way or sent: a second end sends nothing.
    const known = this.record(event.id);
    if (known !== null) {
      if (known.state !== 'pending') this.track(this.forgetOnceEnded(event.id));
      return;
    }
    const text = autoReplyText(event.status, event.response, event.error);
    if (text === null) return;
    const record: AutoReplyRecord = {
      state: 'pending',
      bot: chat.bot.bot.name,
      chat_id: chat.chatId,
      ...definedFields({ thread_id: chat.threadId }),
      text,
      parts_sent: 0,
    };
    this.services.store.apply({ op: 'set', ns: AUTO_REPLY_NS, key: event.id, value: record });
    this.track(
      this.services.store.commit().then(
        () => this.deliver(event.id, record),
        (err: unknown) => this.services.log(`Telegram: the reply of run ${event.id} is not recorded, not sent: ${String(err)}`),
      ),
    );
  }

  private record(runId: string): AutoReplyRecord | null {
    return readAutoReplyRecord(this.services.store.state.get(AUTO_REPLY_NS, runId));
  }

  /** Sends the parts not yet sent, counting each in the record; a hall that stops leaves the rest for its next start. */
  private async deliver(runId: string, record: Extract<AutoReplyRecord, { state: 'pending' }>): Promise<void> {
    const bot = this.bots.get(record.bot);
    if (bot === undefined) {
      this.services.store.apply({ op: 'set', ns: AUTO_REPLY_NS, key: runId, value: { state: 'dropped', error: 'no such bot' } });
      await this.forgetOnceEnded(runId);
      return;
    }
    const parts = splitMessage(record.text);
    const target = { chat_id: record.chat_id, ...definedFields({ message_thread_id: record.thread_id }) };
    for (let i = record.parts_sent; i < parts.length; i++) {
      const sent = await this.sender.send(record.bot, bot.api, target, parts[i] ?? '');
      if (!sent.ok) {
        if (this.signal.aborted) return;
        this.services.store.apply({ op: 'set', ns: AUTO_REPLY_NS, key: runId, value: { state: 'dropped', error: sent.error } });
        await this.forgetOnceEnded(runId);
        return;
      }
      const next = i + 1 < parts.length ? { ...record, parts_sent: i + 1 } : { state: 'sent' as const };
      this.services.store.apply({ op: 'set', ns: AUTO_REPLY_NS, key: runId, value: next });
      await this.services.store.commit();
    }
    await this.forgetOnceEnded(runId);
  }

  /**
   * Removes a settled record once the run's end is durable, so the records do not grow with every
   * run; a record whose run's end is not in the state yet is left to the next start's sweep.
   */
  private async forgetOnceEnded(runId: string): Promise<void> {
    const { store } = this.services;
    try {
      // The end goes into the state just after its raider.done is heard, before a commit resolves.
      if (store.state.runs.has(runId)) await store.commit();
      if (store.state.runs.has(runId)) return;
      await store.commit();
      if (this.signal.aborted || this.record(runId)?.state === 'pending') return;
      store.apply({ op: 'unset', ns: AUTO_REPLY_NS, key: runId });
    } catch {
      // Not durable now, or the hall stops: the record stays, and the next start's sweep removes it.
    }
  }
}
