/**
 * The hall tools, offered when the raider runs under
 * a hall (`RAIDER_HALL_SOCKET` is set): `hall_status`, `hall_spawn` and
 * `telegram_reply`. For a Telegram mission (`RAIDER_HALL_TELEGRAM_BOT` and
 * `…_CHAT_ID` set) `telegram_reply` is bound to that chat: it needs only
 * `text`, restating the same bot and chat is fine, another chat is an
 * error, and the topic always comes from the environment.
 */
import { canonicalLine } from '../../protocol/canonical-line.js';
import { errorMessage } from '../errors.js';
import type { CommandName } from '../../protocol/commands.js';
import { hallRequest, type CommandArgs, type FailureWords } from '../../protocol/hall-client.js';
import type { ReplyTo } from '../../protocol/replies.js';
import { peekString, stringArg, ToolError, type Tool, type ToolResult } from './tool.js';
import { definedFields } from '../../domain/defined-fields.js';

export interface HallBinding {
  socket: string;
  telegram?: { bot: string; chatId: string; threadId?: string };
}

/** The hall this run belongs to, from the environment the hall set. */
export function hallBinding(env: NodeJS.ProcessEnv): HallBinding | undefined {
  const socket = env.RAIDER_HALL_SOCKET;
  if (!socket) return undefined;
  const bot = env.RAIDER_HALL_TELEGRAM_BOT;
  const chatId = env.RAIDER_HALL_TELEGRAM_CHAT_ID;
  if (!bot || !chatId) return { socket };
  const threadId = env.RAIDER_HALL_TELEGRAM_THREAD_ID;
  return { socket, telegram: { bot, chatId, ...(threadId ? { threadId } : {}) } };
}

/** A hall reply as a tool result: `{error}` (or a refused spawn) is a failed result. */
function fromReply(reply: ReplyTo<CommandName>, success?: string): ToolResult {
  if ('error' in reply) return { ok: false, content: `Error: ${reply.error}` };
  return { ok: true, content: success ?? canonicalLine(reply) };
}

const TIMEOUT_MS = 30_000;

/** Transport problems in the words the raider has always used. */
const raiderWords: FailureWords = (failure, socketPath) => {
  switch (failure.kind) {
    case 'no-socket':
    case 'connect':
      return `cannot connect to hall socket ${socketPath}: ${failure.detail}`;
    case 'io':
      return `no response from hall: ${failure.detail}`;
    case 'invalid':
      return `invalid hall response: ${failure.detail}`;
    case 'closed':
    case 'timeout':
      return 'no response from hall';
    case 'cancelled':
      return 'cancelled';
  }
};

async function call<C extends CommandName>(
  binding: HallBinding,
  cmd: C,
  args: CommandArgs<C>,
  signal: AbortSignal,
  success?: string,
): Promise<ToolResult> {
  try {
    return fromReply(await hallRequest(binding.socket, cmd, args, { signal, timeoutMs: TIMEOUT_MS, words: raiderWords }), success);
  } catch (err) {
    return { ok: false, content: `Error: ${errorMessage(err)}` };
  }
}

/** A chat id as Telegram and the hall take it: a number when it is one. */
function chatIdValue(id: string): string | number {
  return /^-?\d+$/.test(id) ? Number(id) : id;
}

export function hallTools(binding: HallBinding): Tool[] {
  const status: Tool = {
    spec: {
      name: 'hall_status',
      description: 'The status of the Raider Hall this run belongs to, as JSON.',
      parameters: { type: 'object', properties: {} },
    },
    access: () => ({ category: 'read', kind: 'read', title: 'Ask the hall for its status', family: 'hall_status' }),
    run: (_args, ctx) => call(binding, 'status', {}, ctx.signal),
  };

  const spawn: Tool = {
    spec: {
      name: 'hall_spawn',
      description: 'Start a mission for a raider of the hall (name as in .raider-hall.yml). Returns the hall reply (run id, or queued).',
      parameters: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'the raider to run' },
          mission: { type: 'string', description: 'what it should do' },
        },
        required: ['name', 'mission'],
      },
    },
    access: (args) => ({
      category: 'execute',
      kind: 'execute',
      title: `Start raider ${peekString(args, 'name')}: ${peekString(args, 'mission')}`,
      family: 'hall_spawn',
    }),
    run: (args, ctx) => call(binding, 'spawn', { name: stringArg(args, 'name'), mission: stringArg(args, 'mission') }, ctx.signal),
  };

  const tg = binding.telegram;
  const reply: Tool = {
    spec: tg
      ? {
          name: 'telegram_reply',
          description: `Send a message to the Telegram chat this mission came from (bot ${tg.bot}, chat ${tg.chatId}).`,
          parameters: {
            type: 'object',
            properties: { text: { type: 'string', description: 'the message (Markdown)' } },
            required: ['text'],
          },
        }
      : {
          name: 'telegram_reply',
          description: 'Send a message to a Telegram chat through one of the hall bots.',
          parameters: {
            type: 'object',
            properties: {
              bot: { type: 'string', description: 'the bot name in .raider-hall.yml' },
              chat_id: { type: 'integer', description: 'the chat' },
              text: { type: 'string', description: 'the message (Markdown)' },
              message_thread_id: { type: 'integer', description: 'the forum topic, if any' },
            },
            required: ['bot', 'chat_id', 'text'],
          },
        },
    access: (args) =>
      tg
        ? { category: 'reply', kind: 'other', title: `Reply in Telegram chat ${tg.chatId}`, family: 'telegram_reply' }
        : { category: 'network', kind: 'fetch', title: `Send to Telegram chat ${String(args.chat_id ?? '')}`, family: 'telegram_reply' },
    async run(args, ctx): Promise<ToolResult> {
      const text = stringArg(args, 'text');
      if (tg) {
        const differs = (key: string, want: string): boolean => args[key] !== undefined && args[key] !== null && String(args[key]) !== want;
        if (differs('bot', tg.bot) || differs('chat_id', tg.chatId)) {
          return { ok: false, content: `Error: this run can only reply to ${tg.bot} chat ${tg.chatId}` };
        }
        const thread = tg.threadId !== undefined ? { message_thread_id: chatIdValue(tg.threadId) } : {};
        return call(binding, 'telegram_reply', { bot: tg.bot, chat_id: chatIdValue(tg.chatId), text, ...thread }, ctx.signal, 'sent');
      }
      const bot = stringArg(args, 'bot');
      const chatId = args.chat_id;
      if (typeof chatId !== 'number' && typeof chatId !== 'string') throw new ToolError(`argument 'chat_id' is required`);
      const thread = definedFields({ message_thread_id: args.message_thread_id });
      return call(binding, 'telegram_reply', { bot, chat_id: chatIdValue(String(chatId)), text, ...thread }, ctx.signal, 'sent');
    },
  };

  return [status, spawn, reply];
}
