// Telegram questions on a shared cluster: two halls on one embedded
// PostgreSQL, both with the same bot (questions: true). hall-a polls the bot
// and its one room (max_running: 1) is held by a long run, so the chat's
// mission runs on hall-b. The question of that run is asked in the chat by
// hall-a, the hall that hears the presses, and a press there answers the
// raider on hall-b: the database carries the question and the answer. The
// run's response goes to the chat once, from the hall that ran it, though
// both halls hear its end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeBotApi } from '../telegram/fake-bot-api.js';
import { press, privateMessage } from '../telegram/telegram-support.js';
import { usePostgresServer } from '../support/postgres-server.js';
import type { EventTap } from '../support/test-hall.js';
import { type BusyPollerPair, startBusyPollerPair, TOKEN } from './telegram-cluster-support.js';

const server = usePostgresServer();

let pair: BusyPollerPair;
let api: FakeBotApi;
let eventsA: EventTap;
let eventsB: EventTap;

beforeAll(async () => {
  const url = await server.freshDatabase();
  pair = await startBusyPollerPair(
    (apiRoot, id) =>
      `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: team-tg\ncluster_mode: shared\n` +
      `hall_id: ${id}\nlease_seconds: 5\nmax_running: 1\npermission_timeout: 60\n` +
      'telegram:\n' +
      `  api_root: ${apiRoot}\n` +
      '  bots:\n' +
      `    ops: { token: '${TOKEN}', allowlist: [42], routing: { '*': bjorn }, questions: true, auto_reply: true }\n`,
  );
  ({ api, eventsA, eventsB } = pair);
}, 60_000);

afterAll(async () => {
  await pair?.stop();
}, 60_000);

describe('Telegram questions on a shared cluster', () => {
  it('a press that reaches the hall polling the bot answers the question of a run on the other hall', async () => {
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const spawned = await eventsB.waitFor((e) => e.type === 'raider.spawned' && e.binding === 'telegram:ops:42');
    expect(spawned.hall).toBe('hall-b');
    const question = await api.waitFor((r) => r.method === 'sendMessage' && r.body.reply_markup !== undefined, 20_000);
    expect(question.body).toMatchObject({ chat_id: '42' });
    expect(question.body.text).toContain(`run ${spawned.id}`);

    const pressed = api.push(TOKEN, press(question, 42, 'Allow once'));
    const notice = await api.waitFor((r) => r.method === 'answerCallbackQuery' && r.body.callback_query_id === pressed.callback_query.id);
    expect(notice.body.text).toBe('Allowed once.');
    // hall-b's desk, asked beside, ends too (answered elsewhere): the press is hall-a's to tell.
    expect(await eventsA.waitFor((e) => e.type === 'permission.answered' && e.id === spawned.id && e.hall === 'hall-a')).toMatchObject({
      answer: 'once',
      by: 'telegram',
      telegram: { bot: 'ops', user_id: '42' },
    });
    const done = await eventsB.waitFor((e) => e.type === 'raider.done' && e.id === spawned.id, 20_000);
    expect(done.response).toBe('["once"]');
    // One message in the chat: the hall that runs the raider does not ask there itself.
    expect(api.requests.filter((r) => r.method === 'sendMessage' && r.body.reply_markup !== undefined)).toHaveLength(1);
    const edit = await api.waitFor((r) => r.method === 'editMessageText' && r.body.message_id === question.messageId);
    expect(edit.body.text).toMatch(/Allowed once by @u42 in Telegram\.$/);
  });

  it('auto_reply: the response of a run on the other hall is sent once, by the hall that ran it', async () => {
    api.push(TOKEN, privateMessage(42, 'answer solo'));
    const done = await eventsB.waitFor((e) => e.type === 'raider.done' && e.response === 'solo', 20_000);
    expect(done.hall).toBe('hall-b');
    await api.waitFor((r) => r.method === 'sendMessage' && r.body.text === 'solo');
    // hall-a hears the end too; a whole run later it has still sent nothing for it.
    await eventsA.waitFor((e) => e.type === 'raider.done' && e.id === done.id);
    api.push(TOKEN, privateMessage(42, 'answer later'));
    await api.waitFor((r) => r.method === 'sendMessage' && r.body.text === 'later', 20_000);
    expect(api.sent().filter((b) => b.text === 'solo')).toHaveLength(1);
  });
});
