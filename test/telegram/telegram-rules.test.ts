import { describe, expect, it } from 'vitest';
import { accessDecision, accessWarnings } from '../../src/domain/telegram-access.js';
import { chatCommand, queueText, statusText } from '../../src/domain/telegram-commands.js';
import { DEFAULT_POLL_BACKOFF, DEFAULT_SEND_POLICY, pollRetryDelay, sendRetry } from '../../src/domain/telegram-retry.js';
import { callbackData, readCallbackData } from '../../src/domain/telegram-question.js';
import {
  botIdOf,
  questionChatOf,
  questionsChatBinding,
  readQuestionsChatBinding,
  readTelegramBinding,
  routeFor,
  telegramBinding,
  telegramMissionId,
} from '../../src/domain/telegram-routing.js';
import { splitMessage, TELEGRAM_TEXT_LIMIT } from '../../src/domain/telegram-split.js';
import { readUpdate } from '../../src/domain/telegram-update.js';

describe('Telegram access (fail-closed)', () => {
  const lists = { allowlist: ['42', '43'], allowed_chats: ['-100500'] };
  it.each([
    ['no sender', -100500, undefined, { ok: false, reason: 'no_sender' }],
    ['a sender not in the allowlist', 99, 99, { ok: false, reason: 'sender_not_allowed' }],
    ['an allowed sender in a private chat', 42, 42, { ok: true }],
    ['ids compared as strings', '43', 43, { ok: true }],
    ['an allowed sender in an allowed group', -100500, '42', { ok: true }],
    ['an allowed sender in another group', -100999, 42, { ok: false, reason: 'chat_not_allowed' }],
  ] as const)('%s', (_name, chat, from, expected) => {
    expect(accessDecision(lists, chat, from)).toEqual(expected);
  });

  it('an empty allowlist rejects everyone, and a chat id in the allowlist never opens its group', () => {
    expect(accessDecision({ allowlist: [], allowed_chats: ['-100500'] }, 42, 42)).toEqual({ ok: false, reason: 'sender_not_allowed' });
    expect(accessDecision({ allowlist: ['-100500'], allowed_chats: [] }, -100500, 42)).toEqual({ ok: false, reason: 'sender_not_allowed' });
  });

  it('warns about an empty allowlist and chat ids in it', () => {
    expect(accessWarnings({ allowlist: [], allowed_chats: [] })).toEqual(['empty allowlist, every message will be rejected']);
    expect(accessWarnings({ allowlist: ['42', '-100500'], allowed_chats: [] })).toEqual([
      "allowlist entry -100500 is a chat id, not a user id; list it under allowed_chats and put the members' user ids in allowlist",
    ]);
  });
});

describe('reading updates', () => {
  const chat = { id: -100500, type: 'supergroup' };
  it('takes the message, else the edited message; a caption is the text', () => {
    expect(readUpdate({ update_id: 1, message: { chat, from: { id: 42, first_name: 'A' }, text: 'hi' } })).toEqual({
      kind: 'message',
      updateId: 1,
      message: { chatId: -100500, chatType: 'supergroup', fromId: 42, firstName: 'A', username: null, text: 'hi' },
    });
    const edited = readUpdate({ update_id: 2, edited_message: { chat, from: { id: 42 }, caption: 'photo' } });
    expect(edited).toMatchObject({ kind: 'message', message: { text: 'photo' } });
  });

  it('keeps the thread id only for forum-topic messages', () => {
    const topic = readUpdate({
      update_id: 3,
      message: { chat, from: { id: 42 }, text: 'x', message_thread_id: 7, is_topic_message: true },
    });
    const reply = readUpdate({ update_id: 4, message: { chat, from: { id: 42 }, text: 'x', message_thread_id: 7 } });
    expect(topic).toMatchObject({ message: { threadId: 7 } });
    expect(reply.kind === 'message' && reply.message.threadId).toBe(undefined);
  });

  it('ignores other kinds of update and names what is wrong with a broken one', () => {
    expect(readUpdate({ update_id: 5, callback_query: {} })).toEqual({ kind: 'ignored', updateId: 5 });
    expect(readUpdate({ update_id: 6, message: { text: 'no chat' } })).toEqual({
      kind: 'invalid',
      updateId: 6,
      error: 'a message without chat.id',
    });
    expect(readUpdate({ message: {} })).toMatchObject({ kind: 'invalid', updateId: null });
    expect(readUpdate('garbage')).toMatchObject({ kind: 'invalid', updateId: null });
  });
});

describe('routing and bindings', () => {
  it("routes a chat to its raider, else to '*', else nowhere", () => {
    expect(routeFor({ '-100500': 'ivar', '*': 'bjorn' }, -100500)).toBe('ivar');
    expect(routeFor({ '-100500': 'ivar', '*': 'bjorn' }, 42)).toBe('bjorn');
    expect(routeFor({ '-100500': 'ivar' }, 42)).toBeNull();
  });

  it('binds the chat, or the topic', () => {
    expect(telegramBinding('ops', 42)).toBe('telegram:ops:42');
    expect(telegramBinding('ops', -100500, 7)).toBe('telegram:ops:-100500:7');
  });

  it.each([
    ['/new', 'new'],
    ['  /new  ', 'new'],
    ['/new@ops_bot', 'new'],
    ['/status', 'status'],
    ['/status@ops_bot ', 'status'],
    ['/cancel', 'cancel'],
    ['/queue@ops_bot', 'queue'],
    ['/newer ideas', null],
    ['/new plan', null],
    ['/status now', null],
    ['/new@', null],
    ['/help', null],
    ['please /new', null],
  ])('%j is the command %s', (text, expected) => {
    expect(chatCommand(text)).toBe(expected);
  });

  it('/status and /queue texts: the run, its age and what waits; missions in order, their text cut short', () => {
    expect(statusText(null, 0, 0)).toBe('Nothing is running. 0 missions wait for this chat.');
    expect(statusText({ id: 'r1', raider: 'bjorn', startedAt: 1_000 }, 1, 126_000)).toBe(
      'Running: r1 (bjorn) for 2m05s. 1 mission waits for this chat.',
    );
    expect(queueText([])).toBe('Nothing waits for this chat.');
    expect(
      queueText([
        { id: 'm1', mission: 'fix\n  the bug' },
        { id: 'm2', mission: 'x'.repeat(80) },
      ]),
    ).toBe(`2 waiting:\n1. m1: fix the bug\n2. m2: ${'x'.repeat(59)}…`);
  });

  it('an update has one mission id per bot token', () => {
    expect(botIdOf('12345:abc')).toBe('12345');
    expect(botIdOf('garbage')).toBe('x');
    expect(telegramMissionId('ops', '12345', 9)).toBe('tg-ops-12345-9');
  });
});

describe('splitting long text', () => {
  it('leaves text up to the limit alone', () => {
    expect(splitMessage('')).toEqual(['']);
    const exact = 'x'.repeat(TELEGRAM_TEXT_LIMIT);
    expect(splitMessage(exact)).toEqual([exact]);
  });

  it('cuts at a paragraph, else a line, else a space, else anywhere, and loses nothing', () => {
    expect(splitMessage('aaaaaa\n\nb\ncc', 10)).toEqual(['aaaaaa\n\n', 'b\ncc']);
    expect(splitMessage('aaaaaa\nbbbbbb', 10)).toEqual(['aaaaaa\n', 'bbbbbb']);
    expect(splitMessage('aaaaaa bbbbbb', 10)).toEqual(['aaaaaa ', 'bbbbbb']);
    expect(splitMessage('a'.repeat(25), 10)).toEqual(['a'.repeat(10), 'a'.repeat(10), 'a'.repeat(5)]);
    const text = Array.from({ length: 3000 }, (_, i) => `word${i}`).join(' ');
    const parts = splitMessage(text);
    expect(parts.join('')).toBe(text);
    expect(parts.every((p) => p.length <= TELEGRAM_TEXT_LIMIT)).toBe(true);
  });

  it('never cuts a surrogate pair apart', () => {
    const parts = splitMessage(`${'a'.repeat(9)}😀😀`, 10);
    expect(parts).toEqual(['a'.repeat(9), '😀😀']);
  });
});

describe('retry decisions', () => {
  it('polling honours retry_after, waits long on a bad token, and backs off exponentially otherwise', () => {
    const policy = DEFAULT_POLL_BACKOFF;
    expect(pollRetryDelay({ status: 429, retryAfterS: 7, description: '' }, 1, policy)).toBe(7000);
    expect(pollRetryDelay({ status: 401, description: 'Unauthorized' }, 1, policy)).toBe(policy.badTokenMs);
    expect(pollRetryDelay({ status: 404, description: 'Not Found' }, 5, policy)).toBe(policy.badTokenMs);
    expect([1, 2, 3].map((n) => pollRetryDelay({ status: 409, description: 'Conflict' }, n, policy))).toEqual([1000, 2000, 4000]);
    expect(pollRetryDelay({ status: 502, description: 'Bad Gateway' }, 30, policy)).toBe(policy.maxMs);
    expect(pollRetryDelay({ description: 'ECONNREFUSED' }, 1, policy)).toBe(1000);
  });

  it('a send retries what may pass, falls back for Markdown and gone topics, and fails the rest', () => {
    const p = DEFAULT_SEND_POLICY;
    const sent = { markdown: true, thread: true };
    expect(sendRetry({ status: 429, retryAfterS: 2, description: '' }, 1, p, sent)).toEqual({ kind: 'retry', delayMs: 2000 });
    expect(sendRetry({ status: 429, retryAfterS: 600, description: '' }, 1, p, sent)).toEqual({ kind: 'fail' });
    // A question's message waits out any retry_after: its wait ends with the question instead.
    expect(sendRetry({ status: 429, retryAfterS: 600, description: '' }, 1, { ...p, waitOutRetryAfter: true }, sent)).toEqual({
      kind: 'retry',
      delayMs: 600_000,
    });
    expect(sendRetry({ status: 500, description: '' }, 2, p, sent)).toEqual({ kind: 'retry', delayMs: 1000 });
    expect(sendRetry({ status: 500, description: '' }, p.maxAttempts, p, sent)).toEqual({ kind: 'fail' });
    expect(sendRetry({ status: 400, description: "Bad Request: can't parse entities" }, 1, p, sent)).toEqual({ kind: 'plain' });
    expect(sendRetry({ status: 400, description: 'Bad Request: message thread not found' }, 1, p, sent)).toEqual({ kind: 'withoutThread' });
    expect(
      sendRetry({ status: 400, description: 'Bad Request: message thread not found' }, 1, p, { markdown: true, thread: false }),
    ).toEqual({
      kind: 'fail',
    });
    expect(sendRetry({ status: 403, description: 'Forbidden: bot was blocked by the user' }, 1, p, sent)).toEqual({ kind: 'fail' });
  });
});

describe('permission questions in a chat: callback data and bindings', () => {
  it('callback data names a question and an answer in a few bytes, and reads back; anything else is not ours', () => {
    const tag = `${'A'.repeat(21)}_`;
    for (const answer of ['once', 'session', 'no'] as const) {
      const data = callbackData(tag, answer);
      expect(Buffer.byteLength(data)).toBeLessThanOrEqual(64);
      expect(readCallbackData(data)).toEqual({ tag, answer });
    }
    expect(readCallbackData(`pq1:${tag}:x`)).toBeNull();
    expect(readCallbackData(`pq1:short:o`)).toBeNull();
    expect(readCallbackData('something else')).toBeNull();
  });

  it('reads a binding back into its bot, chat and topic; other bindings are no chat', () => {
    expect(readTelegramBinding(telegramBinding('ops', -100500, 7))).toEqual({ bot: 'ops', chatId: '-100500', threadId: 7 });
    expect(readTelegramBinding(telegramBinding('ops', 42))).toEqual({ bot: 'ops', chatId: '42' });
    expect(readTelegramBinding('acp:abc')).toBeNull();
    expect(readTelegramBinding(undefined)).toBeNull();
    // A bot's questions chat on a shared cluster is named apart from every chat.
    expect(questionsChatBinding('ops_bot')).toBe('telegram:ops_bot:questions');
    expect(readTelegramBinding(questionsChatBinding('ops'))).toBeNull();
    expect(readQuestionsChatBinding(questionsChatBinding('ops_bot'))).toBe('ops_bot');
    expect(readQuestionsChatBinding(telegramBinding('ops', 42))).toBeNull();
    expect(readQuestionsChatBinding(undefined)).toBeNull();
  });

  it("says which chat (and topic) a bot asks a binding's run's questions in, or that it asks none", () => {
    const ops = { name: 'ops', questions: true, questions_chat: '-100900', questions_thread: 3 };
    // A run of one of the bot's chats: that chat, or its topic.
    expect(questionChatOf(ops, telegramBinding('ops', 42))).toEqual({ chatId: '42' });
    expect(questionChatOf(ops, telegramBinding('ops', -100500, 7))).toEqual({ chatId: '-100500', threadId: 7 });
    // Not with `questions` off, and never in another bot's chat.
    expect(questionChatOf({ ...ops, questions: false }, telegramBinding('ops', 42))).toBeNull();
    expect(questionChatOf(ops, telegramBinding('other', 42))).toBeNull();
    // A run of no chat, or bound to this bot's questions chat: its questions_chat (and topic); none without one.
    expect(questionChatOf(ops, undefined)).toEqual({ chatId: '-100900', threadId: 3 });
    expect(questionChatOf(ops, 'acp:abc')).toEqual({ chatId: '-100900', threadId: 3 });
    expect(questionChatOf(ops, questionsChatBinding('ops'))).toEqual({ chatId: '-100900', threadId: 3 });
    expect(questionChatOf({ name: 'ops', questions: true }, undefined)).toBeNull();
    // Another bot's questions chat is that bot's to ask in.
    expect(questionChatOf(ops, questionsChatBinding('other'))).toBeNull();
  });

  it('reads a button press: who, which message, what data; a press without a message is ignored', () => {
    const press = readUpdate({
      update_id: 9,
      callback_query: { id: 'q1', from: { id: 42, first_name: 'A' }, message: { message_id: 101, chat: { id: -100500 } }, data: 'pq1:x' },
    });
    expect(press).toEqual({
      kind: 'press',
      updateId: 9,
      press: { queryId: 'q1', fromId: 42, firstName: 'A', username: null, chatId: -100500, messageId: 101, data: 'pq1:x' },
    });
    expect(readUpdate({ update_id: 10, callback_query: { id: 'q2', inline_message_id: 'i', data: 'pq1:x' } })).toEqual({
      kind: 'ignored',
      updateId: 10,
    });
  });
});
