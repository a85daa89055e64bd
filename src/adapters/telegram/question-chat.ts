/**
 * Permission questions in Telegram chats (docs/telegram.md). A bot with
 * `questions: true` asks the questions of its chats' runs in that chat (the
 * topic of a forum topic); with `questions_chat` it asks those of runs that
 * came from no chat there too. Each question is one message with inline
 * buttons; a press answers through the hall's question desk, where the first
 * answer of any face wins. When the question ends, however, the message is
 * edited to say how and loses its buttons. While Telegram fails, the message
 * waits for it as long as the question is open, and is never sent after.
 * On a shared cluster only the hall that polls a bot asks in its chats (it
 * alone hears the presses), for the runs of every hall: it registers its
 * desk for each chat whose mission it takes, and for the bot's questions
 * chat, which every hall's runs that came from no chat also ask (alsoAsk);
 * the database carries the questions and answers
 * (actors/cluster-permissions.ts). The other halls' desks still cover those
 * runs, for their other faces (the socket's answer), but post nothing.
 */
import { createHash } from 'node:crypto';
import type { AnsweredBy, OpenQuestion, QuestionFaces, QuestionNews, TelegramAnswerer } from '../../ports/question-desk.js';
import type { PermissionAnswerValue } from '../../domain/permission.js';
import { accessDecision } from '../../domain/telegram-access.js';
import {
  type ChatQuestion,
  type EndedBy,
  endedLine,
  endedText,
  questionKeyboard,
  questionText,
  readCallbackData,
} from '../../domain/telegram-question.js';
import {
  questionChatOf,
  questionsChatBinding,
  readQuestionsChatBinding,
  readTelegramBinding,
  telegramBinding,
} from '../../domain/telegram-routing.js';
import { errorMessage } from '../../domain/error-message.js';
import type { TelegramPress } from '../../domain/telegram-update.js';
import type { HallServices } from '../../ports/hall-services.js';
import type { PermissionRegistry } from '../../ports/permission-registry.js';
import type { TelegramSender } from './sender.js';
import type { BotParts } from './bot-api.js';
import { definedFields } from '../../domain/defined-fields.js';

/** What a hall of a shared cluster asks of the cluster for the questions in its bots' chats. */
export interface ChatQuestionsCluster {
  /** Where this hall registers to answer for the chats of the bots it polls. */
  answerers: PermissionRegistry;
  /** The bindings starting with a prefix that have a run going or a mission waiting in the cluster. */
  busyBindings(prefix: string): Promise<string[]>;
}

/** A question's message in one chat. */
interface Post {
  key: string;
  bot: string;
  chatId: string;
  threadId?: number;
  question: ChatQuestion;
  /** Resolves with the message id once Telegram took the message, null when it did not. */
  sent: Promise<number | null>;
  /** Aborted when the question ends: a wait for Telegram to take the message ends with it. */
  unwanted: AbortController;
  ended?: { answer: PermissionAnswerValue; by: EndedBy };
}

/** Ended questions' messages remembered, to tell a late press how the question ended. */
const POSTS_KEPT = 1000;
/** Telegram shows at most 200 characters of a callback answer. */
const NOTICE_LIMIT = 200;

const ANSWERED_NOTICE: Readonly<Record<PermissionAnswerValue, string>> = {
  once: 'Allowed once.',
  session: 'Allowed for this session.',
  no: 'Refused.',
};

/** The part of callback_data that names a question: 22 characters of base64url SHA-256 of its key. */
export function questionTag(key: string): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 22);
}

/** What a press hears when it names no open question of the hall. */
export const NO_OPEN_QUESTION = 'This is no open question of the hall.';

/** Answers a button press (`answerCallbackQuery`), so its button stops spinning; a failure is logged, never thrown. */
export function answerPress(parts: BotParts, press: TelegramPress, text: string, log: (line: string) => void): Promise<unknown> {
  return parts.api.answerCallbackQuery({ callback_query_id: press.queryId, text: text.slice(0, NOTICE_LIMIT) }).catch((err: unknown) => {
    log(`Telegram bot ${parts.bot.name}: cannot answer a button press: ${String(err)}`);
  });
}

export class QuestionChat {
  /** By question tag: the question's messages, in every chat it was asked in. */
  private readonly posts = new Map<string, Post[]>();
  /** Who pressed the button that answered a question, by its key, for the edit. */
  private readonly pressers = new Map<string, string>();
  private unwatch: (() => void) | null = null;
  /** On a shared cluster: the chat bindings this hall answers for in the cluster, with their bot. */
  private readonly served = new Map<string, string>();
  /** Set once the hall stops: on a shared cluster the questions it ends go on for a run on another hall. */
  private stopping = false;

  constructor(
    private readonly services: Pick<HallServices, 'publish' | 'log'>,
    private readonly desk: QuestionFaces,
    private readonly bots: ReadonlyMap<string, BotParts>,
    private readonly sender: TelegramSender,
    /** Whether this hall takes the bot's updates (and so its presses) now. */
    private readonly polls: (bot: string) => boolean = () => true,
    /** Set on a shared cluster. */
    private readonly cluster: ChatQuestionsCluster | null = null,
  ) {}

  /** Whether some bot asks questions at all. */
  get wanted(): boolean {
    for (const { bot } of this.bots.values()) if (bot.questions || bot.questions_chat !== undefined) return true;
    return false;
  }

  start(): void {
    if (!this.wanted) return;
    this.unwatch = this.desk.watch((news) => this.hear(news));
    this.desk.openFace('telegram', (binding) => this.covers(binding));
    for (const { bot } of this.bots.values())
      if (bot.questions_chat !== undefined)
        this.cluster?.answerers.alsoAsk(questionsChatBinding(bot.name), (binding) => this.fromNoChat(binding));
  }

  stop(): void {
    this.stopping = true;
    this.unserve(() => true);
    if (this.unwatch === null) return;
    this.desk.closeFace('telegram');
    this.unwatch();
    this.unwatch = null;
  }

  /**
   * A chat of a bot this hall polls sent a mission: on a shared cluster, the questions of that chat's
   * runs on every hall come to this hall's desk (the database carries them and the answers), so a
   * press, which only this hall hears, answers them. Resolves once the cluster knows.
   */
  async serveChat(parts: BotParts, binding: string): Promise<void> {
    if (parts.bot.questions) await this.serve(binding, parts.bot.name);
  }

  /**
   * This hall polls the bot now: on a shared cluster the questions of the runs that came from no chat,
   * on every hall, come to this hall's desk to be asked in the bot's questions chat, and so do those
   * of the bot's chats with a run going or a mission waiting (the hall that polled the bot before
   * answered for them): at once, not only after each chat's next message.
   */
  async tookBot(bot: string): Promise<void> {
    const parts = this.bots.get(bot);
    if (this.cluster === null || parts === undefined) return;
    if (parts.bot.questions_chat !== undefined) await this.serve(questionsChatBinding(bot), bot);
    if (!parts.bot.questions) return;
    let bindings: string[];
    try {
      bindings = await this.cluster.busyBindings(telegramBinding(bot, ''));
    } catch (err) {
      this.services.log(`Telegram bot ${bot}: cannot ask the cluster which chats have runs: ${errorMessage(err)}`);
      return;
    }
    // The bot may have gone to another hall meanwhile: then that hall answers for them.
    if (!this.polls(bot)) return;
    for (const binding of bindings) if (readTelegramBinding(binding)?.bot === bot) await this.serve(binding, bot);
  }

  private async serve(binding: string, bot: string): Promise<void> {
    if (this.cluster === null || this.served.has(binding)) return;
    this.served.set(binding, bot);
    await this.cluster.answerers.register(binding, this.desk.ask);
  }

  /** This hall no longer polls the bot: the hall that polls it now answers for its chats. */
  lostBot(bot: string): void {
    this.unserve((served) => served === bot);
  }

  private unserve(which: (bot: string) => boolean): void {
    for (const [binding, bot] of [...this.served]) {
      if (!which(bot)) continue;
      this.served.delete(binding);
      this.cluster?.answerers.unregister(binding);
    }
  }

  /** A run of this binding came from no chat: a questions chat takes its questions. */
  private fromNoChat(binding: string | undefined): boolean {
    return readTelegramBinding(binding) === null && readQuestionsChatBinding(binding) === null;
  }

  /** Whether some bot asks the questions of a run of this binding, on whichever hall polls it. */
  private covers(binding: string | undefined): boolean {
    for (const { bot } of this.bots.values()) if (questionChatOf(bot, binding) !== null) return true;
    return false;
  }

  /**
   * The chats this hall asks a question of a run of this binding in. Only the hall that polls the bot
   * hears the presses: on a shared cluster the others leave its chats to it. A questionsChatBinding is
   * a question another hall's run put to this bot's questions chat.
   */
  private chatsFor(binding: string | undefined): Array<{ bot: BotParts; chatId: string; threadId?: number }> {
    const chats: Array<{ bot: BotParts; chatId: string; threadId?: number }> = [];
    for (const parts of this.bots.values()) {
      const chat = this.polls(parts.bot.name) ? questionChatOf(parts.bot, binding) : null;
      if (chat !== null) chats.push({ bot: parts, ...chat });
    }
    return chats;
  }

  private hear(news: QuestionNews): void {
    if (news.kind === 'asked') this.ask(news.open, news.binding);
    else this.ended(news.key, news.answer, news.by, news.telegram);
  }

  private ask(open: OpenQuestion, binding: string | undefined): void {
    const tag = questionTag(open.key);
    const question: ChatQuestion = {
      run: open.run,
      question: open.question,
      title: open.title,
      tool: open.tool,
      input: open.input,
      reason: open.reason,
      ...definedFields({ rule: open.rule }),
    };
    const posts: Post[] = [];
    for (const { bot, chatId, threadId } of this.chatsFor(binding)) {
      const post: Post = {
        key: open.key,
        bot: bot.bot.name,
        chatId,
        ...definedFields({ threadId }),
        question,
        sent: Promise.resolve(null),
        unwanted: new AbortController(),
      };
      // While Telegram is down or asks us to wait, the other faces answer; the message goes once it is back, if the question is still open.
      const stillOpen = () => post.ended === undefined && this.desk.openQuestion(open.key) !== undefined;
      post.sent = this.sender
        .sendWhile(
          bot.bot.name,
          bot.api,
          {
            chat_id: chatId,
            text: questionText(question),
            ...definedFields({ message_thread_id: threadId }),
            reply_markup: { inline_keyboard: questionKeyboard(tag, open.rule) },
          },
          stillOpen,
          post.unwanted.signal,
        )
        .then((r) => {
          if (r.ok) return r.message_id;
          if (r.gone)
            this.services.log(`Telegram bot ${bot.bot.name}: question ${open.key} ended before Telegram took its message; not sent`);
          return null;
        });
      posts.push(post);
    }
    this.posts.delete(tag);
    this.posts.set(tag, posts);
    while (this.posts.size > POSTS_KEPT) this.posts.delete(this.posts.keys().next().value ?? '');
  }

  private ended(key: string, answer: PermissionAnswerValue, by: AnsweredBy, telegram: TelegramAnswerer | undefined): void {
    const posts = this.posts.get(questionTag(key));
    if (posts === undefined) return;
    const ending: EndedBy =
      by === 'hall' && this.stopping && this.cluster !== null
        ? { face: 'stopped' }
        : by === 'telegram'
          ? { face: 'telegram', ...(telegram !== undefined ? { userId: telegram.user_id } : {}), name: this.pressers.get(key) ?? null }
          : { face: by };
    this.pressers.delete(key);
    for (const post of posts) {
      post.ended = { answer, by: ending };
      post.unwanted.abort();
      const parts = this.bots.get(post.bot);
      if (parts === undefined) continue;
      void post.sent.then((messageId) => {
        if (messageId === null) return;
        return this.sender.edit(post.bot, parts.api, {
          chat_id: post.chatId,
          message_id: messageId,
          text: endedText(post.question, answer, ending),
        });
      });
    }
  }

  /** A button press on a bot's message: answers the question when the presser may and it is still open. */
  async press(parts: BotParts, press: TelegramPress, updateId: number): Promise<void> {
    const bot = parts.bot.name;
    const notice = (text: string) => answerPress(parts, press, text, (line) => this.services.log(line));
    const access = accessDecision(parts.bot, press.chatId, press.fromId);
    if (!access.ok) {
      this.services.publish({
        type: 'telegram.rejected',
        bot,
        chat_id: press.chatId,
        from_id: press.fromId ?? null,
        reason: access.reason,
        update_id: updateId,
      });
      await notice('You may not answer questions of this bot.');
      return;
    }
    const data = readCallbackData(press.data);
    const post = data === null ? undefined : await this.postOf(data.tag, bot, press);
    if (data === null || post === undefined) {
      await notice(NO_OPEN_QUESTION);
      return;
    }
    if (post.ended !== undefined) {
      const { answer, by } = post.ended;
      const over = by.face === 'timeout' || by.face === 'hall' || by.face === 'stopped' ? 'Too late.' : 'Already answered.';
      await notice(`${over} ${endedLine(answer, by)}`);
      return;
    }
    const open = this.desk.openQuestion(post.key);
    if (open === undefined) {
      await notice('This question is not open any more.');
      return;
    }
    const who: TelegramAnswerer = { bot, user_id: String(press.fromId) };
    const name = press.username !== null ? `@${press.username}` : press.firstName;
    if (name !== null) this.pressers.set(post.key, name);
    const result = this.desk.answer(open.run, open.question, data.answer, 'telegram', who);
    if ('error' in result) {
      this.pressers.delete(post.key);
      await notice(result.error);
      return;
    }
    await notice(ANSWERED_NOTICE[data.answer]);
  }

  /** The post of this tag that is the very message pressed (the same bot, chat and message id). */
  private async postOf(tag: string, bot: string, press: TelegramPress): Promise<Post | undefined> {
    for (const post of this.posts.get(tag) ?? []) {
      if (post.bot !== bot || post.chatId !== String(press.chatId)) continue;
      if ((await post.sent) === press.messageId) return post;
    }
    return undefined;
  }
}
