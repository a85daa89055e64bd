/**
 * Permission questions in Telegram chats (bot keys `questions`,
 * `questions_chat`), through a real hall, real (fake) raider processes that
 * ask on their permission channel, and the fake Bot API: the message and its
 * buttons, presses that allow and refuse, a stranger's press, a press after
 * the answer, the edit when another face answered or nobody did, a forum
 * topic, and the questions of runs that came from no chat.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { eventsPath } from '../../src/ports/hall-paths.js';
import { telegramAdapter } from '../../src/adapters/telegram/telegram-adapter.js';
import { SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { eventually, startTestHall, type EventTap, type Json, type TestHall } from '../support/test-hall.js';
import { fast, from, press, privateMessage } from './telegram-support.js';
import { FakeBotApi, type FakeRequest } from './fake-bot-api.js';

const TOKEN = '12345:good-token';
const GROUP = -100500;
const QUESTIONS_CHAT = -100777;

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

/** The scripted ACP agent (test/fixtures/scripted-acp-agent.mjs) as the raider a chat's missions go to. */
const ACP_RAIDER = {
  name: 'scripted',
  entry: `{ acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)} } }`,
};

async function questionsHall(
  botKeys: string,
  timeoutS = 60,
  before: (api: FakeBotApi) => void = () => {},
  // Quick send retries, so a test of Telegram failing does not wait out the default backoff.
  adapter = telegramAdapter({ ...fast, send: { baseMs: 50, maxWaitMs: 2000 } }),
  raider = { name: 'bjorn', entry: '{}' },
): Promise<{ hall: TestHall; api: FakeBotApi; tap: EventTap }> {
  api = await FakeBotApi.start([TOKEN]);
  before(api);
  hall = await startTestHall({
    config:
      `raiders: { ${raider.name}: ${raider.entry} }\n` +
      `permission_timeout: ${timeoutS}\n` +
      'telegram:\n' +
      `  api_root: ${api.url}\n` +
      '  bots:\n' +
      `    ops: { token: '${TOKEN}', allowlist: [42, 43], allowed_chats: ['${GROUP}'], routing: { '*': ${raider.name} }, ${botKeys} }\n`,
    adapters: [adapter],
  });
  const tap = await hall.events('');
  taps.push(tap);
  return { hall, api, tap };
}

function topicMessage(user: number, thread: number, text: string): Json {
  return {
    message: {
      message_id: 1,
      date: 0,
      from: from(user),
      chat: { id: GROUP, type: 'supergroup', is_forum: true },
      message_thread_id: thread,
      is_topic_message: true,
      text,
    },
  };
}

const status = (code: number) => ({ status: code });
const delivered = (api: FakeBotApi) => api.requests.filter((r) => isQuestion(r) && r.messageId !== undefined);

const isQuestion = (r: FakeRequest) => r.method === 'sendMessage' && r.body.reply_markup !== undefined;
const callbackAnswer = (api: FakeBotApi, id: string) =>
  api.waitFor((r) => r.method === 'answerCallbackQuery' && r.body.callback_query_id === id);
const editOf = (api: FakeBotApi, question: FakeRequest) =>
  api.waitFor((r) => r.method === 'editMessageText' && r.body.message_id === question.messageId);

describe('permission questions in a Telegram chat (questions: true)', () => {
  it('asks in the chat with buttons; a press allows once, the tool runs, the message is edited, a later press is told', async () => {
    const { hall, api, tap } = await questionsHall('questions: true');
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const question = await api.waitFor(isQuestion);
    expect(question.body).toMatchObject({ chat_id: '42' });
    expect(question.body.parse_mode).toBeUndefined();
    expect(question.body.message_thread_id).toBeUndefined();
    expect(question.body.text).toBe(
      [
        `Permission question from run ${asked.id}`,
        '',
        'Tool: bash',
        'Wants to: echo 1',
        'Input: echo 1',
        'Reason: bash is not allowed in the default mode',
        '"Allow for this session" adds the rule: Bash(echo *)',
      ].join('\n'),
    );
    const rows = question.body.reply_markup.inline_keyboard as Array<Array<{ text: string; callback_data: string }>>;
    expect(rows.map((row) => row.map((b) => b.text))).toEqual([['Allow once'], ['Allow for this session'], ['Refuse']]);
    for (const b of rows.flat()) {
      expect(Buffer.byteLength(b.callback_data)).toBeLessThanOrEqual(64);
      // It names the question, not the run id or anything a person could reuse on another question.
      expect(b.callback_data).not.toContain(String(asked.id));
    }

    const allow = api.push(TOKEN, press(question, 42, 'Allow once'));
    const answered = await tap.waitFor((e) => e.type === 'permission.answered');
    expect(answered).toMatchObject({
      id: asked.id,
      question: 'q1',
      answer: 'once',
      by: 'telegram',
      telegram: { bot: 'ops', user_id: '42' },
    });
    expect((await callbackAnswer(api, allow.callback_query.id)).body.text).toBe('Allowed once.');
    const done = await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id);
    expect(done.response).toBe('["once"]');
    // The raider ran the tool it was allowed: its events file holds the call's result.
    const events = fs.readFileSync(eventsPath(hall.hall.paths, String(asked.id)), 'utf8');
    const lines = events
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Json);
    expect(lines).toContainEqual(expect.objectContaining({ type: 'tool.result', call: 'c1', ok: true, content: '1\n' }));

    const edit = await editOf(api, question);
    expect(edit.body).toMatchObject({ chat_id: '42' });
    expect(edit.body.reply_markup).toBeUndefined();
    expect(edit.body.text).toBe(`${question.body.text}\n\nAllowed once by @u42 in Telegram.`);

    const late = api.push(TOKEN, press(question, 42, 'Refuse'));
    expect((await callbackAnswer(api, late.callback_query.id)).body.text).toBe('Already answered. Allowed once by @u42 in Telegram.');
    expect(tap.all.filter((e) => e.type === 'permission.answered')).toHaveLength(1);
  });

  it("a stranger's press is refused and changes nothing; Refuse answers no", async () => {
    const { api, tap } = await questionsHall('questions: true');
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const question = await api.waitFor(isQuestion);

    const stranger = api.push(TOKEN, press(question, 99, 'Allow once'));
    expect((await callbackAnswer(api, stranger.callback_query.id)).body.text).toBe('You may not answer questions of this bot.');
    expect(tap.all.find((e) => e.type === 'telegram.rejected')).toMatchObject({
      bot: 'ops',
      reason: 'sender_not_allowed',
      from_id: 99,
      update_id: stranger.update_id,
    });
    expect(tap.all.some((e) => e.type === 'permission.answered')).toBe(false);

    const refuse = api.push(TOKEN, press(question, 42, 'Refuse'));
    expect((await callbackAnswer(api, refuse.callback_query.id)).body.text).toBe('Refused.');
    expect(await tap.waitFor((e) => e.type === 'permission.answered')).toMatchObject({ answer: 'no', by: 'telegram' });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).response).toBe('["no"]');
    expect((await editOf(api, question)).body.text).toMatch(/\n\nRefused by @u42 in Telegram\.$/);
  });

  it("an answer on another face (the socket's answer) edits the chat's message and removes its buttons; a press then is told who answered", async () => {
    const { hall, api, tap } = await questionsHall('questions: true');
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const question = await api.waitFor(isQuestion);
    expect(await hall.request({ cmd: 'answer', run: asked.id, question: 'q1', answer: 'session' })).toMatchObject({ answered: 1 });
    const edit = await editOf(api, question);
    expect(edit.body.reply_markup).toBeUndefined();
    expect(edit.body.text).toBe(`${question.body.text}\n\nAllowed for this session from the socket.`);
    const late = api.push(TOKEN, press(question, 42, 'Allow once'));
    expect((await callbackAnswer(api, late.callback_query.id)).body.text).toBe(
      'Already answered. Allowed for this session from the socket.',
    );
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).response).toBe('["session"]');
  });

  it('a forum topic: the question goes into the topic, and a press there answers it', async () => {
    const { api, tap } = await questionsHall('questions: true');
    api.push(TOKEN, topicMessage(43, 7, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const question = await api.waitFor(isQuestion);
    expect(question.body).toMatchObject({ chat_id: String(GROUP), message_thread_id: 7 });
    api.push(TOKEN, press(question, 42, 'Allow for this session'));
    expect(await tap.waitFor((e) => e.type === 'permission.answered')).toMatchObject({
      answer: 'session',
      by: 'telegram',
      telegram: { bot: 'ops', user_id: '42' },
    });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).response).toBe('["session"]');
    expect((await editOf(api, question)).body.text).toMatch(/Allowed for this session by @u42 in Telegram\.$/);
  });

  it('no answer within permission_timeout: no, and the message says so without buttons', async () => {
    const { api, tap } = await questionsHall('questions: true', 1);
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const question = await api.waitFor(isQuestion);
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).response).toBe('["no"]');
    const edit = await editOf(api, question);
    expect(edit.body.reply_markup).toBeUndefined();
    expect(edit.body.text).toMatch(/\n\nRefused: no answer within permission_timeout\.$/);
    const late = api.push(TOKEN, press(question, 42, 'Allow once'));
    expect((await callbackAnswer(api, late.callback_query.id)).body.text).toBe('Too late. Refused: no answer within permission_timeout.');
  });

  it('a run that ends before an answer: the message says so and loses its buttons', async () => {
    const { hall, api, tap } = await questionsHall('questions: true');
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const question = await api.waitFor(isQuestion);
    expect(await hall.request({ cmd: 'kill', id: asked.id })).not.toHaveProperty('error');
    const edit = await editOf(api, question);
    expect(edit.body.reply_markup).toBeUndefined();
    expect(edit.body.text).toMatch(/\n\nRefused: the run ended before an answer\.$/);
    const late = api.push(TOKEN, press(question, 42, 'Allow once'));
    expect((await callbackAnswer(api, late.callback_query.id)).body.text).toBe('Too late. Refused: the run ended before an answer.');
  });

  it('questions_chat: a run that came from no chat asks there, in its topic', async () => {
    const { hall, api, tap } = await questionsHall(`questions_chat: ${QUESTIONS_CHAT}, questions_thread: 3`);
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1' });
    const question = await api.waitFor(isQuestion);
    expect(question.body).toMatchObject({ chat_id: String(QUESTIONS_CHAT), message_thread_id: 3 });
    expect(question.body.text).toContain(`run ${run.id}`);
    // A press from a chat that is not allowed is refused, whoever presses.
    const refused = api.push(TOKEN, press(question, 42, 'Allow once'));
    expect((await callbackAnswer(api, refused.callback_query.id)).body.text).toBe('You may not answer questions of this bot.');
    expect(tap.all.find((e) => e.type === 'telegram.rejected')).toMatchObject({ reason: 'chat_not_allowed' });
    expect(await hall.request({ cmd: 'answer', run: run.id, question: 'q1', answer: 'once' })).toMatchObject({ answered: 1 });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id)).response).toBe('["once"]');
  });

  it("questions_chat: a run whose binding names the questions chat of a bot this hall does not know gets no channel at once; its own bot's is asked", async () => {
    // permission_timeout 60: a question nobody asks would wait that long (and the test time out) instead of being refused at once.
    const { hall, api, tap } = await questionsHall(`questions_chat: ${QUESTIONS_CHAT}`);
    const ghost = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1', binding: 'telegram:ghost:questions' });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === ghost.id)).response).toBe('["no channel"]');
    expect(tap.all.some((e) => e.type === 'permission.asked' && e.id === ghost.id)).toBe(false);
    const own = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1', binding: 'telegram:ops:questions' });
    const question = await api.waitFor(isQuestion);
    expect(question.body).toMatchObject({ chat_id: String(QUESTIONS_CHAT) });
    expect(question.body.text).toContain(`run ${own.id}`);
    expect(await hall.request({ cmd: 'answer', run: own.id, question: 'q1', answer: 'once' })).toMatchObject({ answered: 1 });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === own.id)).response).toBe('["once"]');
    expect(api.requests.filter(isQuestion)).toHaveLength(1);
  });

  it('without questions: a run of a chat still gets no permission channel, as before', async () => {
    const { api, tap } = await questionsHall('questions: false');
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    expect((await tap.waitFor((e) => e.type === 'raider.done')).response).toBe('["no channel"]');
    expect(api.requests.some(isQuestion)).toBe(false);
  });

  it('without questions: a press on a button left from an earlier config is still answered, so it stops spinning', async () => {
    const { api } = await questionsHall('questions: false');
    const stale = api.push(TOKEN, {
      callback_query: {
        id: 'stale1',
        from: from(42),
        chat_instance: '1',
        message: { message_id: 7, date: 0, chat: { id: 42, type: 'private' }, text: 'an old question' },
        data: 'pq1:AAAAAAAAAAAAAAAAAAAAAA:o',
      },
    });
    expect((await callbackAnswer(api, stale.callback_query.id)).body.text).toBe('This is no open question of the hall.');
  });
});

describe("an ACP agent's permission questions in its chat (questions: true)", () => {
  it("asks in the chat with the agent's options as buttons; a press answers the agent", async () => {
    const { hall, api, tap } = await questionsHall('questions: true', 60, () => {}, undefined, ACP_RAIDER);
    api.push(TOKEN, privateMessage(42, 'ask'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const question = await api.waitFor(isQuestion);
    expect(question.body).toMatchObject({ chat_id: '42' });
    expect(question.body.text).toContain(`Permission question from run ${asked.id}`);
    expect(question.body.text).toContain('rm -rf build');
    const rows = question.body.reply_markup.inline_keyboard as Array<Array<{ text: string }>>;
    expect(rows.flat().map((b) => b.text)).toEqual(['Allow once', 'Refuse']);

    const allow = api.push(TOKEN, press(question, 42, 'Allow once'));
    expect(await tap.waitFor((e) => e.type === 'permission.answered')).toMatchObject({
      id: asked.id,
      answer: 'once',
      by: 'telegram',
      telegram: { bot: 'ops', user_id: '42' },
    });
    expect((await callbackAnswer(api, allow.callback_query.id)).body.text).toBe('Allowed once.');
    // The agent heard its allow_once option: it says so, and that is the run's answer.
    expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).toMatchObject({
      status: 'completed',
      response: 'allowed',
    });
    const events = fs.readFileSync(eventsPath(hall.hall.paths, String(asked.id)), 'utf8');
    expect(events).toContain('"type":"permission"');
    expect((await editOf(api, question)).body.text).toMatch(/\n\nAllowed once by @u42 in Telegram\.$/);
  });

  it('Refuse answers the agent with its reject option', async () => {
    const { api, tap } = await questionsHall('questions: true', 60, () => {}, undefined, ACP_RAIDER);
    api.push(TOKEN, privateMessage(42, 'ask'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const question = await api.waitFor(isQuestion);
    api.push(TOKEN, press(question, 42, 'Refuse'));
    expect(await tap.waitFor((e) => e.type === 'permission.answered')).toMatchObject({ answer: 'no', by: 'telegram' });
    expect(await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).toMatchObject({
      status: 'completed',
      response: 'refused',
    });
  });
});

describe('a press on a question of an earlier hall', () => {
  it('after a restart a press on the old message is told it names no open question, and answers nothing', async () => {
    const first = await questionsHall('questions: true');
    const root = first.hall.root;
    first.api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await first.tap.waitFor((e) => e.type === 'permission.asked');
    const question = await first.api.waitFor(isQuestion);
    await first.hall.stop();
    hall = undefined;

    hall = await startTestHall({ root, adapters: [telegramAdapter(fast)] });
    const tap = await hall.events('');
    taps.push(tap);
    const late = first.api.push(TOKEN, press(question, 42, 'Allow once'));
    expect((await callbackAnswer(first.api, late.callback_query.id)).body.text).toBe('This is no open question of the hall.');
    expect(tap.all.filter((e) => e.type === 'permission.answered' && e.id === asked.id)).toEqual([]);
  });
});

describe('permission questions while Telegram fails', () => {
  it('Telegram down longer than a send retries: the question waits for it, and once it is back the message comes and a press answers', async () => {
    const failures = Array.from({ length: 6 }, () => status(502));
    const { api, tap } = await questionsHall('questions: true', 60, (api) => api.script('sendMessage', ...failures));
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const question = await api.waitFor((r) => isQuestion(r) && r.messageId !== undefined);
    expect(api.calls('sendMessage').filter(isQuestion)).toHaveLength(failures.length + 1);
    api.push(TOKEN, press(question, 42, 'Allow once'));
    expect(await tap.waitFor((e) => e.type === 'permission.answered')).toMatchObject({ answer: 'once', by: 'telegram' });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).response).toBe('["once"]');
  });

  it('Telegram answering 429: the socket answers meanwhile, and the message is not sent after the question ended', async () => {
    const wait = {
      status: 429,
      body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } },
    };
    const { hall, api, tap } = await questionsHall('questions: true', 60, (api) => api.script('sendMessage', wait));
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    await api.waitFor(isQuestion);
    expect(await hall.request({ cmd: 'answer', run: asked.id, question: 'q1', answer: 'once' })).toMatchObject({ answered: 1 });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).response).toBe('["once"]');
    await eventually(() =>
      expect(hall.logs.join('\n')).toContain(`question ${asked.id}:q1 ended before Telegram took its message; not sent`),
    );
    expect(api.requests.filter(isQuestion)).toHaveLength(1);
    expect(api.calls('editMessageText')).toEqual([]);
  });

  // The hall here gives up a send whose retry_after is over 0.5 s (maxWaitMs), as a real one does over a minute.
  const longWait = (retryAfterS: number) => ({
    status: 429,
    body: {
      ok: false,
      error_code: 429,
      description: `Too Many Requests: retry after ${retryAfterS}`,
      parameters: { retry_after: retryAfterS },
    },
  });
  const shortCap = telegramAdapter({ ...fast, send: { baseMs: 50, maxWaitMs: 500 } });

  it('a retry_after longer than a send waits: the question keeps its message waiting, and it is sent once Telegram is back', async () => {
    const { api, tap } = await questionsHall('questions: true', 60, (api) => api.script('sendMessage', longWait(1)), shortCap);
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const question = await api.waitFor((r) => isQuestion(r) && r.messageId !== undefined);
    expect(api.requests.filter(isQuestion)).toHaveLength(2);
    api.push(TOKEN, press(question, 42, 'Allow once'));
    expect(await tap.waitFor((e) => e.type === 'permission.answered')).toMatchObject({ answer: 'once', by: 'telegram' });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).response).toBe('["once"]');
    expect(tap.all.filter((e) => e.type === 'telegram.send_error')).toEqual([]);
  });

  it('a retry_after longer than the question: the wait ends with the question, and nothing is sent or given up on', async () => {
    const { hall, api, tap } = await questionsHall('questions: true', 60, (api) => api.script('sendMessage', longWait(3600)), shortCap);
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    await api.waitFor(isQuestion);
    expect(await hall.request({ cmd: 'answer', run: asked.id, question: 'q1', answer: 'no' })).toMatchObject({ answered: 1 });
    await eventually(() =>
      expect(hall.logs.join('\n')).toContain(`question ${asked.id}:q1 ended before Telegram took its message; not sent`),
    );
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).response).toBe('["no"]');
    expect(api.requests.filter(isQuestion)).toHaveLength(1);
    expect(tap.all.filter((e) => e.type === 'telegram.send_error')).toEqual([]);
  });

  it('Telegram down for the whole question: it times out as usual, and nothing is sent', async () => {
    const { api, tap } = await questionsHall('questions: true', 1, (api) =>
      api.script('sendMessage', ...Array.from({ length: 100 }, () => status(502))),
    );
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const asked = await tap.waitFor((e) => e.type === 'permission.asked');
    const answered = await tap.waitFor((e) => e.type === 'permission.answered');
    expect(answered).toMatchObject({ id: asked.id, answer: 'no', by: 'timeout' });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === asked.id)).response).toBe('["no"]');
    expect(delivered(api)).toEqual([]);
  });

  it("a bot whose token is wrong: the question is still answered from the socket, and the bot's failure is reported", async () => {
    api = await FakeBotApi.start([TOKEN]);
    hall = await startTestHall({
      config:
        'raiders: { bjorn: {} }\n' +
        'permission_timeout: 60\n' +
        'telegram:\n' +
        `  api_root: ${api.url}\n` +
        '  bots:\n' +
        `    ops: { token: '999:wrong-token', allowlist: [42], routing: { '*': bjorn }, questions_chat: ${QUESTIONS_CHAT} }\n`,
      adapters: [telegramAdapter(fast)],
    });
    const tap = await hall.events('');
    taps.push(tap);
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1' });
    await tap.waitFor((e) => e.type === 'permission.asked');
    expect(await tap.waitFor((e) => e.type === 'telegram.send_error')).toMatchObject({ bot: 'ops', chat_id: String(QUESTIONS_CHAT) });
    expect(await hall.request({ cmd: 'answer', run: run.id, question: 'q1', answer: 'once' })).toMatchObject({ answered: 1 });
    expect((await tap.waitFor((e) => e.type === 'raider.done' && e.id === run.id)).response).toBe('["once"]');
  });
});
