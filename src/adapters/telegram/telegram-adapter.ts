/**
 * The hall's Telegram face:
 * a poll loop per bot, access checks, routing chats to raiders, `/new`, the
 * per-chat history, the `telegram_reply` control command, and permission
 * questions with buttons in chats (question-chat.ts), and runs' answers
 * sent back to their chats (auto-reply.ts). Poll health is
 * part of `status`.
 */
import path from 'node:path';
import type { HallAdapter, HallAdapterFactory, HallServices } from '../../ports/hall-services.js';
import { accessWarnings } from '../../domain/telegram-access.js';
import { DEFAULT_POLL_BACKOFF, DEFAULT_SEND_POLICY, type PollBackoff, type SendPolicy } from '../../domain/telegram-retry.js';
import { botIdOf } from '../../domain/telegram-routing.js';
import type { TelegramBotConfig } from '../../ports/hall-config.js';
import type { ReplyTo } from '../../protocol/replies.js';
import type { CommandHandlers } from '../../protocol/command-service.js';
import { socketAnswer } from '../dashboard/question-desk.js';
import { type BotParts, createBotApi } from './bot-api.js';
import { QuestionChat } from './question-chat.js';
import { AutoReply } from './auto-reply.js';
import { ChatHistory } from './chat-history.js';
import { BotPoller } from './poller.js';
import { TelegramSender } from './sender.js';
import { UpdateHandler } from './update-handler.js';
import { definedFields } from '../../domain/defined-fields.js';

export interface TelegramAdapterOptions {
  /** The long-poll timeout in seconds (getUpdates `timeout`); default 30. */
  pollTimeoutS?: number;
  backoff?: Partial<PollBackoff>;
  send?: Partial<SendPolicy>;
}

/** Builds the Telegram adapter; a config without a `telegram:` section gets none. */
export function telegramAdapter(options: TelegramAdapterOptions = {}): HallAdapterFactory {
  return (services) => (services.config.telegram === null ? null : new TelegramAdapter(services, services.config.telegram.bots, options));
}

interface Bot {
  parts: BotParts;
  warnings: string[];
  /** Null for a bot that is not polled (its token is another bot's). */
  poller: BotPoller | null;
}

class TelegramAdapter implements HallAdapter {
  readonly name = 'telegram';
  readonly commands: Readonly<Partial<CommandHandlers>>;
  private readonly bots = new Map<string, Bot>();
  private readonly abort = new AbortController();
  private readonly sender: TelegramSender;
  private loops: Promise<void>[] = [];
  private readonly questions: QuestionChat;
  private readonly autoReply: AutoReply;

  constructor(
    private readonly services: HallServices,
    configs: readonly TelegramBotConfig[],
    options: TelegramAdapterOptions,
  ) {
    this.sender = new TelegramSender(services, { ...DEFAULT_SEND_POLICY, ...options.send }, this.abort.signal);
    const history = new ChatHistory(path.join(services.paths.stateDir, 'telegram'));
    const pollOptions = { pollTimeoutS: options.pollTimeoutS ?? 30, backoff: { ...DEFAULT_POLL_BACKOFF, ...options.backoff } };
    const pollerOfToken = new Map<string, string>();
    const allParts = new Map<string, BotParts>();
    for (const config of configs)
      allParts.set(config.name, { bot: config, botId: botIdOf(config.token), api: createBotApi(config.token, config.api_root) });
    const shared = services.store.shared;
    this.questions = new QuestionChat(
      services,
      services.questions,
      allParts,
      this.sender,
      (name) => shared === undefined || (this.bots.get(name)?.poller?.polls() ?? false),
      shared !== undefined ? { answerers: services.permissionChannels, busyBindings: (prefix) => shared.faces.busyBindings(prefix) } : null,
    );
    const questions = this.questions.wanted ? this.questions : null;
    this.autoReply = new AutoReply(services, allParts, this.sender, this.abort.signal);
    this.autoReply.listen();
    this.commands = {
      telegram_reply: (payload: Record<string, unknown>) => this.reply(payload),
      ...(questions ? socketAnswer(services.questions) : {}),
    };
    for (const parts of allParts.values()) {
      const config = parts.bot;
      const warnings = accessWarnings(config);
      if (Object.keys(config.routing).length === 0) warnings.push('no routing, messages are stored but start no raider');
      // Two loops on one token end each other's long polls (409) forever: one per token.
      const first = pollerOfToken.get(config.token);
      let poller: BotPoller | null = null;
      if (first !== undefined) warnings.push(`same token as bot ${first}; not polled (it can still send)`);
      else {
        pollerOfToken.set(config.token, config.name);
        const handler = new UpdateHandler(services, parts, history, this.sender, () => this.abort.signal.aborted, questions);
        poller = new BotPoller(services, parts, handler, pollOptions, this.abort.signal, (held) => {
          if (!held) this.questions.lostBot(config.name);
          else void this.questions.tookBot(config.name);
        });
      }
      this.bots.set(config.name, { parts, warnings, poller });
    }
  }

  async start(): Promise<void> {
    this.questions.start();
    this.autoReply.start();
    for (const [name, bot] of this.bots) {
      for (const warning of bot.warnings) {
        this.services.log(`Telegram bot ${name}: ${warning}`);
        this.services.publish({ type: 'telegram.config_warning', bot: name, warning });
      }
      if (bot.poller) {
        const poller = bot.poller;
        this.loops.push(poller.run().catch((err: Error) => this.services.log(`Telegram bot ${name}: poll loop failed: ${err.message}`)));
      }
    }
  }

  async stop(): Promise<void> {
    this.questions.stop();
    this.autoReply.stop();
    this.abort.abort();
    await Promise.all([...this.loops, this.autoReply.drained()]);
    this.loops = [];
  }

  status(): Record<string, unknown> {
    const bots: Record<string, unknown> = {};
    for (const [name, bot] of this.bots) {
      bots[name] = {
        ...(bot.poller ? bot.poller.status() : { state: 'not polled' }),
        ...(bot.warnings.length > 0 ? { warnings: bot.warnings } : {}),
      };
    }
    return { telegram: bots };
  }

  /** `telegram_reply {bot, chat_id, text, [message_thread_id]}`: answered once Telegram took the text, or with why not. */
  private async reply(p: Record<string, unknown>): Promise<ReplyTo<'telegram_reply'>> {
    if (typeof p.bot !== 'string' || p.bot === '') return { error: 'telegram_reply requires a bot' };
    const bot = this.bots.get(p.bot);
    if (!bot) return { error: `unknown telegram bot ${JSON.stringify(p.bot)}` };
    const chatId = telegramId(p.chat_id);
    if (chatId === null) return { error: 'telegram_reply requires a chat_id (a Telegram chat id)' };
    if (typeof p.text !== 'string' || p.text.trim() === '') return { error: 'telegram_reply requires a text' };
    let thread: number | undefined;
    if (p.message_thread_id !== undefined && p.message_thread_id !== null) {
      const id = telegramId(p.message_thread_id);
      if (id === null || Number(id) <= 0) return { error: 'message_thread_id must be a positive integer' };
      thread = Number(id);
    }
    const sent = await this.sender.send(p.bot, bot.parts.api, { chat_id: chatId, ...definedFields({ message_thread_id: thread }) }, p.text);
    if (sent.ok) this.autoReply.noteSent(p.bot, chatId);
    return sent.ok ? { ok: 1, message_ids: sent.message_ids } : { error: sent.error };
  }
}

/** A chat or thread id as Telegram takes it: an integer, or its digits. */
function telegramId(value: unknown): number | string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) return value;
  return null;
}
