import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultAdapters } from '../../src/actors/default-adapters.js';
import type { HallAdapterFactory } from '../../src/ports/hall-services.js';
import { telegramAdapter, type TelegramAdapterOptions } from '../../src/adapters/telegram/telegram-adapter.js';
import { startTestHall, tempRoot, eventually, type EventTap, type Json, type TestHall } from '../support/test-hall.js';
import { fast, from, privateMessage } from './telegram-support.js';
import { FakeBotApi } from './fake-bot-api.js';
import { runStarted } from '../support/hall-client.js';
import { eventsPath } from '../../src/ports/hall-paths.js';

const TOKEN = '12345:good-token';
const BAD_TOKEN = '777:revoked';
const GROUP = -100500;

let hall: TestHall | undefined;
let api: FakeBotApi | undefined;
const taps: EventTap[] = [];
afterEach(async () => {
  for (const tap of taps.splice(0)) tap.close();
  await hall?.stop();
  hall = undefined;
  await api?.close();
  api = undefined;
});

function opsConfig(url: string, extraBots = ''): string {
  return (
    'raiders: { bjorn: {}, ivar: {} }\n' +
    'telegram:\n' +
    `  api_root: ${url}\n` +
    '  bots:\n' +
    `    ops: { token: '${TOKEN}', allowlist: [42, '43'], allowed_chats: ['${GROUP}'], routing: { '*': bjorn, '${GROUP}': ivar } }\n` +
    extraBots
  );
}

async function opsHall(
  options: { root?: string; extraBots?: string; adapter?: TelegramAdapterOptions; adapters?: readonly HallAdapterFactory[] } = {},
): Promise<{ hall: TestHall; api: FakeBotApi; tap: EventTap }> {
  api ??= await FakeBotApi.start([TOKEN]);
  hall = await startTestHall({
    ...(options.root !== undefined ? { root: options.root } : {}),
    config: opsConfig(api.url, options.extraBots),
    adapters: options.adapters ?? [telegramAdapter(options.adapter ?? fast)],
  });
  const tap = await hall.events('');
  taps.push(tap);
  return { hall, api, tap };
}

function groupMessage(chat: number, user: number | null, text: string, extra: Json = {}): Json {
  return {
    message: {
      message_id: 1,
      date: 0,
      ...(user !== null ? { from: from(user) } : {}),
      chat: { id: chat, type: 'supergroup' },
      text,
      ...extra,
    },
  };
}

/** The env a run saw (`argv` mission of the fake raider). */
function runEnv(done: Json): Json {
  return JSON.parse(done.response as string).env as Json;
}

describe('Telegram through a real hall and a fake Bot API server', () => {
  it('access is fail-closed: no sender, a sender not allowed, a group not allowed are rejected; allowed messages are announced, stored and routed', async () => {
    const { hall, api, tap } = await opsHall();
    const noSender = api.push(TOKEN, groupMessage(GROUP, null, 'answer x'));
    const stranger = api.push(TOKEN, privateMessage(99, 'answer x'));
    const otherGroup = api.push(TOKEN, groupMessage(-100999, 42, 'answer x'));
    const mine = api.push(TOKEN, privateMessage(42, 'answer hi'));
    const team = api.push(TOKEN, groupMessage(GROUP, 43, 'argv'));

    const rejected = await eventually(() => {
      const r = tap.all.filter((e) => e.type === 'telegram.rejected');
      expect(r).toHaveLength(3);
      return r;
    });
    expect(rejected.map((e) => [e.update_id, e.reason, e.from_id, e.chat_id])).toEqual([
      [noSender.update_id, 'no_sender', null, GROUP],
      [stranger.update_id, 'sender_not_allowed', 99, 99],
      [otherGroup.update_id, 'chat_not_allowed', 42, -100999],
    ]);
    expect(rejected[0]).toMatchObject({ bot: 'ops' });

    const doneMine = await tap.waitFor((e) => e.type === 'raider.done' && e.response === 'hi');
    expect(doneMine).toMatchObject({ slot: 'bjorn', binding: 'telegram:ops:42' });
    const doneTeam = await tap.waitFor((e) => e.type === 'raider.done' && e.slot === 'ivar');
    expect(doneTeam.binding).toBe(`telegram:ops:${GROUP}`);
    const env = runEnv(doneTeam);
    expect(env).toMatchObject({ RAIDER_HALL_TELEGRAM_BOT: 'ops', RAIDER_HALL_TELEGRAM_CHAT_ID: String(GROUP) });
    expect(env.RAIDER_HALL_TELEGRAM_THREAD_ID).toBeUndefined();

    const announced = tap.all.filter((e) => e.type === 'telegram.in');
    expect(announced.map((e) => e.update_id)).toEqual([mine.update_id, team.update_id]);
    expect(announced[0]).toEqual(
      expect.objectContaining({
        bot: 'ops',
        chat_id: 42,
        text: 'answer hi',
        first_name: 'user42',
        username: 'u42',
        update_id: mine.update_id,
      }),
    );
    expect(announced[0]!.message_thread_id).toBeUndefined();

    // Per-chat history: the raw accepted updates; rejected chats leave none.
    const historyDir = path.join(hall.root, '.raider-hall/state/telegram/ops');
    expect(JSON.parse(fs.readFileSync(path.join(historyDir, '42.json'), 'utf8'))).toEqual([mine]);
    expect(fs.readdirSync(historyDir).sort()).toEqual([`${GROUP}.json`, '42.json']);
  });

  it('a forum-topic message binds CHAT:THREAD and passes the thread id; a reply thread outside a topic does not', async () => {
    // The adapters `raider hall start` runs, with their defaults (30 s long polls).
    const { api, tap } = await opsHall({ adapters: defaultAdapters });
    api.push(TOKEN, groupMessage(GROUP, 42, 'argv', { message_thread_id: 7, is_topic_message: true }));
    const inTopic = await tap.waitFor((e) => e.type === 'raider.done' && e.binding === `telegram:ops:${GROUP}:7`);
    expect(runEnv(inTopic).RAIDER_HALL_TELEGRAM_THREAD_ID).toBe('7');
    expect(tap.all.find((e) => e.type === 'telegram.in')).toMatchObject({ message_thread_id: 7 });

    api.push(TOKEN, groupMessage(GROUP, 42, 'argv', { message_thread_id: 9, reply_to_message: { message_id: 1 } }));
    const notTopic = await tap.waitFor((e) => e.type === 'raider.done' && e.binding === `telegram:ops:${GROUP}`);
    expect(runEnv(notTopic).RAIDER_HALL_TELEGRAM_THREAD_ID).toBeUndefined();
    expect(tap.all.filter((e) => e.type === 'telegram.in')[1]!.message_thread_id).toBeUndefined();
  });

  it('/new (also /new@botname) resets the binding and confirms in the same chat or topic; /newer is a mission', async () => {
    const { api, tap } = await opsHall();
    api.push(TOKEN, privateMessage(42, 'answer one'));
    const first = await tap.waitFor((e) => e.type === 'raider.done' && e.response === 'one');
    api.push(TOKEN, privateMessage(42, '  /new@ops_bot '));
    const reset = await tap.waitFor((e) => e.type === 'session.reset');
    expect(reset).toMatchObject({ binding: 'telegram:ops:42', session: first.session });
    const confirm = await api.waitFor((r) => r.method === 'sendMessage' && r.body.chat_id === 42);
    expect(confirm.body).toMatchObject({ chat_id: 42, text: 'Started a new session.' });
    expect(confirm.body.message_thread_id).toBeUndefined();

    // In a topic with nothing bound yet: no error, the confirmation goes into the topic.
    api.push(TOKEN, groupMessage(GROUP, 42, '/new', { message_thread_id: 7, is_topic_message: true }));
    const inTopic = await api.waitFor((r) => r.method === 'sendMessage' && r.body.chat_id === GROUP);
    expect(inTopic.body).toMatchObject({ text: 'Started a new session.', message_thread_id: 7 });

    api.push(TOKEN, privateMessage(42, '/newer ideas'));
    const newer = await tap.waitFor((e) => e.type === 'raider.done' && e.response === 'fake raider did: /newer ideas');
    expect(newer.session).not.toBe(first.session);
    expect(tap.all.filter((e) => e.type === 'raider.spawned')).toHaveLength(2);
  });

  it("/status, /queue and /cancel (also @botname) show and steer the chat binding's run and what waits for it", async () => {
    const { hall, api, tap } = await opsHall();
    /** The next message the hall sends to the chat after `text` came from it. */
    const replyTo = async (chat: number, text: string): Promise<Json> => {
      const seen = new Set(api.calls('sendMessage'));
      api.push(TOKEN, privateMessage(chat, text));
      return (await api.waitFor((r) => r.method === 'sendMessage' && r.body.chat_id === chat && !seen.has(r))).body;
    };

    api.push(TOKEN, privateMessage(42, 'wait 30'));
    const running = await tap.waitFor((e) => e.type === 'raider.spawned' && e.binding === 'telegram:ops:42');
    api.push(TOKEN, privateMessage(42, 'answer second in line'));
    await tap.waitFor((e) => e.type === 'raider.queued' && e.binding === 'telegram:ops:42' && e.queue_depth === 1);
    api.push(TOKEN, privateMessage(42, `answer third ${'x'.repeat(80)}`));
    await tap.waitFor((e) => e.type === 'raider.queued' && e.binding === 'telegram:ops:42' && e.queue_depth === 2);
    const queued = tap.all.filter((e) => e.type === 'raider.queued').map((e) => e.mission_id as string);

    const status = await replyTo(42, '/status@ops_bot');
    expect(status.text).toMatch(new RegExp(`^Running: ${running.id} \\(bjorn\\) for \\d+s\\. 2 missions wait for this chat\\.$`));
    expect(status.message_thread_id).toBeUndefined();
    const queue = await replyTo(42, '/queue');
    expect(queue.text).toBe(`2 waiting:\n1. ${queued[0]}: answer second in line\n2. ${queued[1]}: answer third ${'x'.repeat(46)}…`);

    // A SIGINT before the raider's handlers are in place would end the run failed, not cancelled.
    await runStarted(eventsPath(hall.hall.paths, String(running.id)));
    const cancel = await replyTo(42, '/cancel');
    expect(cancel.text).toBe(`Cancelling ${running.id}.`);
    expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === running.id)).toMatchObject({ status: 'cancelled' });
    await tap.waitFor((e) => e.type === 'raider.done' && e.response === 'second in line');
    await tap.waitFor((e) => e.type === 'raider.done' && typeof e.response === 'string' && e.response.startsWith('third'));

    expect((await replyTo(42, '/cancel')).text).toBe('Nothing is running; nothing to cancel.');
    expect((await replyTo(42, '/status')).text).toBe('Nothing is running. 0 missions wait for this chat.');
    expect((await replyTo(42, '/queue')).text).toBe('Nothing waits for this chat.');

    // In a forum topic the answer goes into the topic; its binding is the topic's.
    api.push(TOKEN, groupMessage(GROUP, 43, '/status', { message_thread_id: 7, is_topic_message: true }));
    const inTopic = await api.waitFor((r) => r.method === 'sendMessage' && r.body.chat_id === GROUP);
    expect(inTopic.body).toMatchObject({ text: 'Nothing is running. 0 missions wait for this chat.', message_thread_id: 7 });

    // A stranger's command is rejected as a message would be: nothing is answered or cancelled.
    const sentBefore = api.calls('sendMessage').length;
    const stranger = api.push(TOKEN, privateMessage(99, '/cancel'));
    await tap.waitFor((e) => e.type === 'telegram.rejected' && e.update_id === stranger.update_id);
    expect(tap.all.find((e) => e.type === 'telegram.rejected' && e.update_id === stranger.update_id)).toMatchObject({
      reason: 'sender_not_allowed',
    });
    // /help is no command: it is a mission, as any other /word.
    api.push(TOKEN, privateMessage(42, '/help'));
    await tap.waitFor((e) => e.type === 'raider.done' && e.response === 'fake raider did: /help');
    expect(
      api
        .calls('sendMessage')
        .slice(sentBefore)
        .every((r) => r.body.chat_id !== 99),
    ).toBe(true);
    expect(tap.all.filter((e) => e.type === 'raider.spawned')).toHaveLength(4);
  });

  it('telegram_reply answers once Telegram took the text, or with its error; long text is split; 429 waits retry_after', async () => {
    const { hall, api, tap } = await opsHall();
    const ok = await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 42, text: 'hello *there*' });
    expect(ok).toEqual({ ok: 1, message_ids: [expect.any(Number)] });
    expect(api.sent().at(-1)).toEqual({ chat_id: 42, text: 'hello *there*', parse_mode: 'Markdown' });

    const long = `${'a'.repeat(3000)}\n${'b'.repeat(3000)}`;
    const split = await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: '42', text: long, message_thread_id: 7 });
    expect(split.message_ids).toHaveLength(2);
    const parts = api.sent().slice(-2);
    expect(parts.map((p) => p.text.length)).toEqual([3001, 3000]);
    expect(parts.map((p) => p.text).join('')).toBe(long);
    expect(parts.every((p) => p.message_thread_id === 7 && p.chat_id === '42')).toBe(true);

    api.script('sendMessage', { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } });
    const failed = await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 5, text: 'anyone?' });
    expect(failed).toEqual({ error: '400: Bad Request: chat not found' });
    expect(await tap.waitFor((e) => e.type === 'telegram.send_error')).toMatchObject({
      bot: 'ops',
      chat_id: 5,
      error: '400: Bad Request: chat not found',
    });

    api.script('sendMessage', {
      status: 429,
      body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } },
    });
    const before = api.calls('sendMessage').length;
    expect(await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 42, text: 'patience' })).toMatchObject({ ok: 1 });
    const [limited, retried] = api.calls('sendMessage').slice(before);
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(950);

    api.script('sendMessage', {
      status: 400,
      body: { ok: false, error_code: 400, description: "Bad Request: can't parse entities: unclosed" },
    });
    expect(await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 42, text: 'snake_case' })).toMatchObject({ ok: 1 });
    expect(api.sent().at(-1)).toEqual({ chat_id: 42, text: 'snake_case' });

    expect(await hall.request({ cmd: 'telegram_reply', bot: 'nope', chat_id: 42, text: 'x' })).toEqual({
      error: 'unknown telegram bot "nope"',
    });
    expect(await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 42 })).toEqual({ error: 'telegram_reply requires a text' });
    expect(await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 'x', text: 'y' })).toEqual({
      error: 'telegram_reply requires a chat_id (a Telegram chat id)',
    });
  });

  it('getUpdates answered 409 and 429 is retried after a backoff and after retry_after; polling then goes on', async () => {
    const { hall, api, tap } = await opsHall();
    await api.waitFor((r) => r.method === 'getUpdates');
    api.script(
      'getUpdates',
      { status: 409 },
      {
        status: 429,
        body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } },
      },
    );
    api.push(TOKEN, privateMessage(42, 'answer before'));
    await tap.waitFor((e) => e.type === 'telegram.poll_error' && e.status === 429);
    const errors = tap.all.filter((e) => e.type === 'telegram.poll_error');
    expect(errors.map((e) => [e.bot, e.status])).toEqual([
      ['ops', 409],
      ['ops', 429],
    ]);
    expect(errors[0]!.error).toContain('terminated by other getUpdates request');
    api.push(TOKEN, privateMessage(42, 'answer after'));
    await tap.waitFor((e) => e.type === 'raider.done' && e.response === 'after');
    // polls: [the first one (answered with the update), 409, 429, then on as usual]
    const polls = api.calls('getUpdates');
    expect(polls[2]!.at - polls[1]!.at).toBeGreaterThanOrEqual(90); // the backoff after the 409
    expect(polls[3]!.at - polls[2]!.at).toBeGreaterThanOrEqual(950); // retry_after: 1
    expect(api.maxConcurrentPolls).toBe(1);
    const status = await hall.request({ cmd: 'status' });
    expect(status.telegram.ops).toMatchObject({ state: 'polling', failures: 0, last_error: { status: 429 } });
  });

  it('a bad token is a telegram.poll_error with slow retries, never a tight loop; config warnings are logged and shown', async () => {
    const { hall, api, tap } = await opsHall({
      extraBots: `    revoked: { token: '${BAD_TOKEN}', routing: { '*': bjorn } }\n`,
    });
    // The first 401 may come before we listen; the second one, a second later, we see.
    await api.waitFor(() => api!.calls('getUpdates', BAD_TOKEN).length >= 2, 3000);
    await tap.waitFor((e) => e.type === 'telegram.poll_error' && e.bot === 'revoked', 1000);
    const polls = api.calls('getUpdates', BAD_TOKEN);
    expect(polls.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < polls.length; i++) expect(polls[i]!.at - polls[i - 1]!.at).toBeGreaterThanOrEqual(950);
    expect(tap.all.find((e) => e.type === 'telegram.poll_error')).toMatchObject({ bot: 'revoked', status: 401, error: 'Unauthorized' });
    const status = await hall.request({ cmd: 'status' });
    expect(status.telegram.revoked).toMatchObject({
      state: 'retrying',
      last_error: { status: 401 },
      warnings: ['empty allowlist, every message will be rejected'],
    });
    expect(status.telegram.ops.state).toBe('polling');
    expect(hall.logs).toContain('Telegram bot revoked: empty allowlist, every message will be rejected');
    expect(hall.logs.some((l) => l.startsWith('Telegram bot revoked: the token was not accepted (401)'))).toBe(true);
    expect(`${hall.logs.join('\n')}${JSON.stringify(tap.all)}`).not.toContain(BAD_TOKEN);
  });

  it('stop aborts the long poll at once', async () => {
    const running = await opsHall({ adapter: { pollTimeoutS: 30 } });
    await running.api.waitFor((r) => r.method === 'getUpdates');
    const started = Date.now();
    await running.hall.stop();
    // Far below the 30 s the long poll would otherwise hold the loop.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('the update offset is durable: a restarted hall neither loses nor repeats a message', async () => {
    const root = tempRoot();
    const first = await opsHall({ root });
    const a = first.api.push(TOKEN, privateMessage(42, 'answer a'));
    first.api.push(TOKEN, { update_id: a.update_id + 1, callback_query: { id: 'q' } }); // ignored, but confirmed too
    await first.tap.waitFor((e) => e.type === 'raider.done' && e.response === 'a');
    await eventually(() => {
      const state = JSON.parse(fs.readFileSync(path.join(root, '.raider-hall/state/telegram.json'), 'utf8'));
      expect(state.ops).toEqual({ bot_id: '12345', offset: a.update_id + 2 });
    });
    await first.hall.stop();
    hall = undefined;

    // While the hall is down a message comes, and the server offers every update again: only the stored offset holds them back.
    const b = first.api.push(TOKEN, privateMessage(42, 'answer b'));
    first.api.forgetConfirmations(TOKEN);
    const before = first.api.calls('getUpdates').length;
    const second = await opsHall({ root });
    await second.tap.waitFor((e) => e.type === 'raider.done' && e.response === 'b');
    expect(second.api.calls('getUpdates')[before]!.body.offset).toBe(b.update_id);
    expect(second.tap.all.filter((e) => e.type === 'telegram.in').map((e) => e.text)).toEqual(['answer b']);
  });
});
