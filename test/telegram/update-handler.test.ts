import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HallRequest, HallServices } from '../../src/ports/hall-services.js';
import type { TelegramBotConfig } from '../../src/ports/hall-config.js';
import type { BotApi } from '../../src/adapters/telegram/bot-api.js';
import { ChatHistory, HISTORY_LIMIT } from '../../src/adapters/telegram/chat-history.js';
import { TelegramSender } from '../../src/adapters/telegram/sender.js';
import { UpdateHandler } from '../../src/adapters/telegram/update-handler.js';
import { DurableState, noDirt } from '../../src/ports/durable-state.js';
import { DEFAULT_SEND_POLICY } from '../../src/domain/telegram-retry.js';
import type { BusEvent, ReplyBody } from '../../src/machines/hall-effects.js';
import { tempRoot } from '../support/hall-client.js';

const bot: TelegramBotConfig = {
  name: 'ops',
  token: '12345:t',
  allowlist: ['42'],
  allowed_chats: [],
  routing: { '*': 'bjorn' },
  api_root: 'http://127.0.0.1:9',
  questions: false,
  auto_reply: false,
};

/** An update handler over a fake hall: requests and events are recorded, the answer is scripted. */
function handlerUnderTest(options: { answer?: ReplyBody; stopping?: boolean } = {}) {
  const state = new DurableState();
  const requests: HallRequest[] = [];
  const events: BusEvent[] = [];
  const services = {
    store: { state },
    publish: (event: BusEvent) => events.push(event),
    request: async (command: HallRequest) => {
      requests.push(command);
      return options.answer ?? { queued: 1 };
    },
  } as unknown as HallServices;
  const api: BotApi = {
    getUpdates: async () => [],
    sendMessage: async () => ({ message_id: 1 }),
    editMessageText: async () => true,
    answerCallbackQuery: async () => true,
    sendChatAction: async () => true,
  };
  const root = tempRoot('tg-handler-');
  const history = new ChatHistory(path.join(root, 'telegram'));
  const sender = new TelegramSender(services, DEFAULT_SEND_POLICY, new AbortController().signal);
  const handler = new UpdateHandler(services, { bot, botId: '12345', api }, history, sender, () => options.stopping ?? false);
  return { handler, state, requests, events };
}

const message = (updateId: number, text: string) => ({
  update_id: updateId,
  message: { message_id: 1, date: 0, chat: { id: 42, type: 'private' }, from: { id: 42, first_name: 'A' }, text },
});

describe('update handler', () => {
  it('hands an accepted message to the hall with the update as its mission id, binding and chat', async () => {
    const { handler, requests } = handlerUnderTest();
    expect(await handler.handle(message(9, 'hello'))).toBe('done');
    expect(requests).toEqual([
      expect.objectContaining({
        type: 'cmd.spawn',
        missionId: 'tg-ops-12345-9',
        name: 'bjorn',
        mission: 'hello',
        binding: 'telegram:ops:42',
        telegram: { bot: 'ops', chat_id: 42 },
      }),
    ]);
  });

  it('a re-delivered update whose mission still waits or runs is not handed over again', async () => {
    const { handler, state, requests } = handlerUnderTest();
    const entry = { id: 'tg-ops-12345-9', name: 'bjorn', mission: 'hello', binding: 'telegram:ops:42' };
    state.apply({ op: 'queue', queue: { kind: 'binding', binding: 'telegram:ops:42' }, entry }, noDirt());
    expect(await handler.handle(message(9, 'hello'))).toBe('done');
    state.apply(
      { op: 'run', run: { id: 'bjorn-1', slot: 'bjorn', base_name: 'bjorn', entry, started_at: 0, events_path: '', log_path: '' } },
      noDirt(),
    );
    expect(await handler.handle(message(9, 'hello'))).toBe('done');
    expect(requests).toEqual([]);
  });

  it('when the hall stops before taking the mission the update must come again', async () => {
    expect(await handlerUnderTest({ stopping: true }).handler.handle(message(9, 'hello'))).toBe('again');
    const refused = handlerUnderTest({ stopping: false, answer: { error: 'invalid raider name' } });
    expect(await refused.handler.handle(message(10, 'hello'))).toBe('done');
    expect(refused.events.at(-1)).toEqual({ type: 'telegram.update_error', bot: 'ops', update_id: 10, error: 'invalid raider name' });
  });

  it('a message without text is stored and announced but starts nothing', async () => {
    const { handler, requests, events } = handlerUnderTest();
    expect(await handler.handle({ update_id: 11, message: { chat: { id: 42 }, from: { id: 42 }, photo: [] } })).toBe('done');
    expect(requests).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['telegram.in', 'telegram.update_error']);
  });

  it('a broken update is an update_error, not a crash', async () => {
    const { handler, events } = handlerUnderTest();
    expect(await handler.handle({ update_id: 12, message: { text: 'no chat' } })).toBe('done');
    expect(events).toEqual([{ type: 'telegram.update_error', bot: 'ops', update_id: 12, error: 'a message without chat.id' }]);
  });

  it('the chat history keeps the newest updates only', async () => {
    const history = new ChatHistory(path.join(tempRoot('tg-history-'), 'telegram'), 5);
    for (let i = 0; i < 9; i++) void history.append('ops', 42, { update_id: i });
    await history.append('ops', 42, { update_id: 9 });
    const kept = JSON.parse(fs.readFileSync(history.file('ops', 42), 'utf8')) as Array<{ update_id: number }>;
    expect(kept.map((u) => u.update_id)).toEqual([5, 6, 7, 8, 9]);
    expect(HISTORY_LIMIT).toBeGreaterThan(5);
  });
});
