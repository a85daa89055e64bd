/**
 * One Telegram update, start to end: read it, check access,
 * announce and store an accepted message, then answer a chat command (see
 * ./chat-commands.ts) or hand the mission to the raider its chat is routed to. The
 * answer tells the poll loop whether the update is done with (its offset may
 * be confirmed) or must come again: only when the hall stops before its
 * mission was taken.
 */
import type { HallServices } from '../../ports/hall-services.js';
import type { TelegramTarget } from '../../domain/mission.js';
import { accessDecision } from '../../domain/telegram-access.js';
import { routeFor, telegramBinding, telegramMissionId } from '../../domain/telegram-routing.js';
import { readUpdate, type TelegramMessage } from '../../domain/telegram-update.js';
import type { DurableState } from '../../ports/durable-state.js';
import type { BotParts } from './bot-api.js';
import type { ChatHistory } from './chat-history.js';
import { answerPress, NO_OPEN_QUESTION, type QuestionChat } from './question-chat.js';
import type { TelegramSender } from './sender.js';
import { chatCommand } from '../../domain/telegram-commands.js';
import { answerChatCommand } from './chat-commands.js';
import { errorMessage } from '../../domain/error-message.js';
import { definedFields } from '../../domain/defined-fields.js';

export type Handled = 'done' | 'again';

export class UpdateHandler {
  constructor(
    private readonly services: HallServices,
    private readonly parts: BotParts,
    private readonly history: ChatHistory,
    private readonly sender: TelegramSender,
    private readonly stopping: () => boolean,
    /** Button presses on permission questions; null when no bot asks questions. */
    private readonly questions: QuestionChat | null = null,
  ) {}

  async handle(raw: unknown): Promise<Handled> {
    const bot = this.parts.bot.name;
    const read = readUpdate(raw);
    if (read.kind === 'invalid') {
      this.updateError(read.updateId, read.error);
      return 'done';
    }
    if (read.kind === 'ignored') return 'done';
    if (read.kind === 'press') {
      // A bot that asks no questions still answers a press (a button left from an earlier config), or it spins.
      if (this.questions) await this.questions.press(this.parts, read.press, read.updateId);
      else await answerPress(this.parts, read.press, NO_OPEN_QUESTION, (line) => this.services.log(line));
      return 'done';
    }
    const { updateId, message } = read;

    const access = accessDecision(this.parts.bot, message.chatId, message.fromId);
    if (!access.ok) {
      this.services.publish({
        type: 'telegram.rejected',
        bot,
        chat_id: message.chatId,
        from_id: message.fromId ?? null,
        reason: access.reason,
        update_id: updateId,
      });
      return 'done';
    }

    this.services.publish({
      type: 'telegram.in',
      bot,
      chat_id: message.chatId,
      ...definedFields({ message_thread_id: message.threadId }),
      text: message.text,
      first_name: message.firstName,
      username: message.username,
      update_id: updateId,
    });
    try {
      await this.history.append(bot, message.chatId, raw);
    } catch (err) {
      // History is a record, not the work: the message is still handled.
      this.updateError(updateId, `cannot write the chat history: ${errorMessage(err)}`);
    }

    const binding = telegramBinding(bot, message.chatId, message.threadId);
    const command = chatCommand(message.text);
    if (command !== null) {
      const text = await answerChatCommand(this.services, command, binding);
      void this.sender.send(bot, this.parts.api, target(bot, message), text);
      return 'done';
    }

    const raider = routeFor(this.parts.bot.routing, message.chatId);
    if (raider === null) return 'done';
    if (message.text.trim() === '') {
      this.updateError(updateId, 'the message has no text; no mission started');
      return 'done';
    }
    const missionId = telegramMissionId(bot, this.parts.botId, updateId);
    // Telegram delivers again what the hall did not confirm; a mission still waiting or running is not run twice.
    if (missionKnown(this.services.store.state, missionId)) return 'done';
    // On a shared cluster it may wait in the cluster's queue or run on another hall (a poller that was replaced
    // after handing it over, before it could write the offset).
    const faces = this.services.store.shared?.faces;
    if (faces && (await faces.missionKnown(missionId))) return 'done';
    if (this.stopping()) return 'again';
    await this.questions?.serveChat(this.parts, binding);
    const reply = await this.services.request({
      type: 'cmd.spawn',
      missionId,
      name: raider,
      mission: message.text,
      binding,
      telegram: target(bot, message),
      at: Date.now(),
    });
    if ('error' in reply) {
      if (this.stopping()) return 'again';
      this.updateError(updateId, reply.error);
    }
    return 'done';
  }

  private updateError(updateId: number | null, error: string): void {
    this.services.publish({ type: 'telegram.update_error', bot: this.parts.bot.name, update_id: updateId, error });
  }
}

/** The chat (and topic) a mission's raider answers with telegram_reply. */
function target(bot: string, message: TelegramMessage): TelegramTarget & { message_thread_id?: number } {
  return {
    bot,
    chat_id: message.chatId,
    ...definedFields({ message_thread_id: message.threadId }),
  };
}

function missionKnown(state: DurableState, missionId: string): boolean {
  for (const run of state.runs.values()) if (run.entry.id === missionId) return true;
  for (const queues of [state.slotQueues, state.bindingQueues]) {
    for (const queue of queues.values()) if (queue.some((m) => m.id === missionId)) return true;
  }
  return false;
}
