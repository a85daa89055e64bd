// A bot's questions_chat on a shared cluster: two halls on one embedded
// PostgreSQL, both with the bot `ops` (questions_chat: a group). hall-a polls
// the bot and its one room is held by a long run, so the runs spawned on
// hall-b's socket (they come from no chat) run there. Their questions are
// asked in the questions chat once, by hall-a, the hall that hears the
// presses; a press there answers the raider on hall-b, and an answer on
// hall-b's socket ends the question in the chat too: the database carries
// the questions and the answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeBotApi, FakeRequest } from '../telegram/fake-bot-api.js';
import { press } from '../telegram/telegram-support.js';
import { usePostgresServer } from '../support/postgres-server.js';
import { eventually, type EventTap, type TestHall } from '../support/test-hall.js';
import { type BusyPollerPair, startBusyPollerPair, TOKEN } from './telegram-cluster-support.js';

const server = usePostgresServer();
const GROUP = '-100500';

let pair: BusyPollerPair;
let api: FakeBotApi;
let hallA: TestHall;
let hallB: TestHall;
let eventsA: EventTap;
let eventsB: EventTap;

const isQuestion = (r: FakeRequest) => r.method === 'sendMessage' && r.body.reply_markup !== undefined;

/** A mission spawned on hall-b's socket that asks one question; its run, which runs on hall-b. */
async function askOnHallB(): Promise<string> {
  const spawned = await hallB.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1' });
  const run = await eventsB.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === spawned.mission_id, 20_000);
  expect(run.hall).toBe('hall-b');
  return run.id;
}

beforeAll(async () => {
  const url = await server.freshDatabase();
  pair = await startBusyPollerPair(
    (apiRoot, id) =>
      `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: team-tg-qc\ncluster_mode: shared\n` +
      `hall_id: ${id}\nlease_seconds: 5\nmax_running: 1\npermission_timeout: 60\n` +
      'telegram:\n' +
      `  api_root: ${apiRoot}\n` +
      '  bots:\n' +
      `    ops: { token: '${TOKEN}', allowlist: [42], allowed_chats: ['${GROUP}'], questions_chat: '${GROUP}' }\n`,
  );
  ({ api, hallA, hallB, eventsA, eventsB } = pair);
}, 60_000);

afterAll(async () => {
  await pair?.stop();
}, 60_000);

describe('questions_chat on a shared cluster', () => {
  it('the question of a run on the hall that does not poll the bot is asked once, by the one that does, and a press answers it', async () => {
    const run = await askOnHallB();
    const question = await api.waitFor((r) => isQuestion(r) && String(r.body.text).includes(`run ${run}`), 20_000);
    expect(question.body.chat_id).toBe(GROUP);

    const pressed = api.push(TOKEN, press(question, 42, 'Allow once'));
    const notice = await api.waitFor((r) => r.method === 'answerCallbackQuery' && r.body.callback_query_id === pressed.callback_query.id);
    expect(notice.body.text).toBe('Allowed once.');
    expect(await eventsA.waitFor((e) => e.type === 'permission.answered' && e.id === run && e.hall === 'hall-a')).toMatchObject({
      answer: 'once',
      by: 'telegram',
      telegram: { bot: 'ops', user_id: '42' },
    });
    expect((await eventsB.waitFor((e) => e.type === 'raider.done' && e.id === run, 20_000)).response).toBe('["once"]');
    const edit = await api.waitFor((r) => r.method === 'editMessageText' && r.body.message_id === question.messageId);
    expect(edit.body.text).toMatch(/Allowed once by @u42 in Telegram\.$/);
    // One message in the cluster: hall-b, which asked, posts nothing itself.
    expect(api.requests.filter(isQuestion)).toHaveLength(1);
  });

  it("an answer on the run's own hall (its socket) ends the question in the chat, and the message says so", async () => {
    const run = await askOnHallB();
    const question = await api.waitFor((r) => isQuestion(r) && String(r.body.text).includes(`run ${run}`), 20_000);
    await eventually(async () =>
      expect(await hallB.request({ cmd: 'answer', run, question: 'q1', answer: 'no' })).toMatchObject({ answered: 1 }),
    );
    expect((await eventsB.waitFor((e) => e.type === 'raider.done' && e.id === run, 20_000)).response).toBe('["no"]');
    const edit = await api.waitFor((r) => r.method === 'editMessageText' && r.body.message_id === question.messageId);
    expect(edit.body.text).toMatch(/Refused from the socket\.$/);
    expect(await eventsA.waitFor((e) => e.type === 'permission.answered' && e.id === run && e.hall === 'hall-a')).toMatchObject({
      answer: 'no',
      by: 'socket',
    });
    expect(api.requests.filter((r) => isQuestion(r) && String(r.body.text).includes(`run ${run}`))).toHaveLength(1);
  });

  // Last: it stops hall-a.
  it("the polling hall stops while the question is open: the question stays open on the run's hall, and is answered there", async () => {
    const run = await askOnHallB();
    const question = await api.waitFor((r) => isQuestion(r) && String(r.body.text).includes(`run ${run}`), 20_000);
    await hallA.stop();
    // The chat's message says hall-a stopped asking, not that the question was refused.
    const edit = await api.waitFor((r) => r.method === 'editMessageText' && r.body.message_id === question.messageId);
    expect(edit.body.text).toMatch(
      /No longer asked here: the hall that asked stopped\. A run on another hall can still be answered there\.$/,
    );
    expect(await hallB.request({ cmd: 'answer', run, question: 'q1', answer: 'once' })).toMatchObject({ answered: 1 });
    expect((await eventsB.waitFor((e) => e.type === 'raider.done' && e.id === run, 20_000)).response).toBe('["once"]');
  });
});
