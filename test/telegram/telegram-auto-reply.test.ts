/**
 * `auto_reply: true` through real halls, real (fake) raider processes and
 * the fake Bot API: `typing` while a chat's run goes, the response sent
 * into the chat (in parts past 4,096 characters, into the topic of a forum
 * topic), a failed run's error, nothing when the raider replied itself, and
 * the reply sent once when the hall is killed between the run's end and
 * the send, and no record of a reply kept once it is settled (sent, replied
 * by the raider, or dropped after a send refused for good).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { telegramAdapter } from '../../src/adapters/telegram/telegram-adapter.js';
import { eventually, startTestHall, tempRoot, type EventTap, type TestHall } from '../support/test-hall.js';
import { fast, from, privateMessage } from './telegram-support.js';
import { FakeBotApi } from './fake-bot-api.js';
import { autoReplyConfig, replyOnceAcrossAKill, sentText, TOKEN } from './auto-reply-support.js';

const GROUP = -100500;

const started: Array<{ hall: TestHall; api: FakeBotApi; tap: EventTap }> = [];
afterEach(async () => {
  for (const { hall, api, tap } of started.splice(0)) {
    tap.close();
    await hall.stop();
    await api.close();
  }
});

/** A hall with the bot `ops` and its own fake Bot API, stopped after the test. */
async function replyHall(botKeys = 'auto_reply: true'): Promise<{ hall: TestHall; api: FakeBotApi; tap: EventTap }> {
  const api = await FakeBotApi.start([TOKEN]);
  const hall = await startTestHall({ config: autoReplyConfig(api.url, botKeys), adapters: [telegramAdapter(fast)] });
  const tap = await hall.events('');
  started.push({ hall, api, tap });
  return { hall, api, tap };
}

describe('auto_reply: true', () => {
  it('shows typing while the run goes, renewed, and sends the response into the chat when it ends', async () => {
    const { api, tap } = await replyHall();
    const gate = path.join(tempRoot(), 'go');
    api.push(TOKEN, privateMessage(42, `until ${gate}`));
    const first = await api.waitFor((r) => r.method === 'sendChatAction');
    expect(first.body).toEqual({ chat_id: '42', action: 'typing' });
    // Telegram shows typing for about five seconds: it is renewed while the run goes.
    const second = await api.waitFor((r) => r.method === 'sendChatAction' && r !== first, 8000);
    expect(second.at - first.at).toBeGreaterThanOrEqual(3000);
    fs.writeFileSync(gate, '');
    const done = await tap.waitFor((e) => e.type === 'raider.done');
    const reply = await api.waitFor(sentText(`saw ${gate}`));
    expect(reply.body).toMatchObject({ chat_id: '42' });
    expect(reply.body.message_thread_id).toBeUndefined();
    expect(reply.at).toBeGreaterThanOrEqual(done.time * 1000 - 1000);
    const typingAfter = api.calls('sendChatAction').filter((r) => r.at > reply.at);
    expect(typingAfter).toEqual([]);
  });

  it('a failed run: its error, briefly; a long response: in parts of at most 4,096 characters, into the forum topic', async () => {
    const { api } = await replyHall();
    api.push(TOKEN, privateMessage(42, 'fail the disk is full'));
    await api.waitFor(sentText('Run failed: the disk is full'));

    const words = Array.from({ length: 1200 }, (_, i) => `w${i}`).join(' ');
    api.push(TOKEN, {
      message: {
        message_id: 2,
        date: 0,
        from: from(42),
        chat: { id: GROUP, type: 'supergroup', is_forum: true },
        message_thread_id: 7,
        is_topic_message: true,
        text: `answer ${words}`,
      },
    });
    const last = await api.waitFor((r) => r.method === 'sendMessage' && String(r.body.text).endsWith('w1199'));
    const parts = api.sent().filter((b) => b.chat_id === String(GROUP));
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(String(part.text).length).toBeLessThanOrEqual(4096);
      expect(part.message_thread_id).toBe(7);
    }
    expect(parts.map((p) => p.text).join('')).toBe(words);
    expect(last.body.chat_id).toBe(String(GROUP));
  });

  it('a raider that sent to the chat itself during the run gets nothing sent for it', async () => {
    const { hall, api, tap } = await replyHall();
    const gate = path.join(tempRoot(), 'go');
    api.push(TOKEN, privateMessage(42, `until ${gate}`));
    await tap.waitFor((e) => e.type === 'raider.spawned');
    expect(await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 42, text: 'my own words' })).toMatchObject({ ok: 1 });
    fs.writeFileSync(gate, '');
    await tap.waitFor((e) => e.type === 'raider.done');
    // The next run's reply comes after whatever the first run's end would have sent.
    api.push(TOKEN, privateMessage(42, 'answer next'));
    await api.waitFor(sentText('next'));
    expect(api.sent().map((b) => b.text)).toEqual(['my own words', 'next']);
  });

  it('without auto_reply: no typing and nothing sent', async () => {
    const { hall, api, tap } = await replyHall('auto_reply: false');
    api.push(TOKEN, privateMessage(42, 'answer quiet'));
    await tap.waitFor((e) => e.type === 'raider.done');
    expect(await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 42, text: 'marker' })).toMatchObject({ ok: 1 });
    expect(api.requests.filter((r) => r.method !== 'getUpdates').map((r) => r.body.text ?? r.method)).toEqual(['marker']);
  });

  it('keeps no record of a settled reply: once sent, or when the raider replied itself, and the run has ended', async () => {
    const { hall, api, tap } = await replyHall();
    const records = path.join(hall.root, '.raider-hall', 'state', 'telegram_auto_reply.json');
    api.push(TOKEN, privateMessage(42, 'answer one'));
    const one = await tap.waitFor((e) => e.type === 'raider.done');
    await api.waitFor((r) => sentText('one')(r) && r.messageId !== undefined);
    const gate = path.join(tempRoot(), 'go');
    api.push(TOKEN, privateMessage(42, `until ${gate}`));
    const run = await tap.waitFor((e) => e.type === 'raider.spawned' && e.id !== one.id);
    expect(await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 42, text: 'my own words' })).toMatchObject({ ok: 1 });
    // While the run goes, its record says the raider replied: its end sends nothing.
    await eventually(() => expect(JSON.parse(fs.readFileSync(records, 'utf8'))).toEqual({ [run.id]: { state: 'replied' } }));
    fs.writeFileSync(gate, '');
    await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id);
    await eventually(() => expect(JSON.parse(fs.readFileSync(records, 'utf8'))).toEqual({}));
  });

  it('keeps no record of a reply dropped: a send Telegram refuses for good, once the run has ended', async () => {
    const { hall, api, tap } = await replyHall();
    api.script('sendMessage', { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } });
    const records = path.join(hall.root, '.raider-hall', 'state', 'telegram_auto_reply.json');
    api.push(TOKEN, privateMessage(42, 'answer lost'));
    await tap.waitFor((e) => e.type === 'raider.done');
    await api.waitFor(sentText('lost'));
    await eventually(() => expect(JSON.parse(fs.readFileSync(records, 'utf8'))).toEqual({}));
    // Refused for good: not sent again.
    expect(api.calls('sendMessage').filter(sentText('lost'))).toHaveLength(1);
  });

  it('once, when the hall is killed between the run end and the send: the next hall sends it, and only once', async () => {
    await replyOnceAcrossAKill();
  });
});
