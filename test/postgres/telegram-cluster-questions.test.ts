// Telegram questions on a shared cluster: two halls on one embedded
// PostgreSQL, both with the same bot (questions: true). hall-a polls the bot
// and its one room (max_running: 1) is held by a long run, so the chat's
// mission runs on hall-b. The question of that run is asked in the chat by
// hall-a, the hall that hears the presses, and a press there answers the
// raider on hall-b: the database carries the question and the answer. The
// run's response goes to the chat once, from the hall that ran it, though
// both halls hear its end.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { telegramAdapter } from '../../src/adapters/telegram/telegram-adapter.js';
import { FakeBotApi } from '../telegram/fake-bot-api.js';
import { fast, press, privateMessage } from '../telegram/telegram-support.js';
import { usePostgresServer } from '../support/postgres-server.js';
import { eventually, startTestHall, tempRoot, type EventTap, type TestHall } from '../support/test-hall.js';

const server = usePostgresServer();
const TOKEN = '12345:good-token';

let api: FakeBotApi;
let hallA: TestHall;
let hallB: TestHall;
let eventsA: EventTap;
let eventsB: EventTap;
let release: string;

function hallConfig(url: string, id: string): string {
  return (
    `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: team-tg\ncluster_mode: shared\n` +
    `hall_id: ${id}\nlease_seconds: 5\nmax_running: 1\npermission_timeout: 60\n` +
    'telegram:\n' +
    `  api_root: ${api.url}\n` +
    '  bots:\n' +
    `    ops: { token: '${TOKEN}', allowlist: [42], routing: { '*': bjorn }, questions: true, auto_reply: true }\n`
  );
}

beforeAll(async () => {
  const url = await server.freshDatabase();
  api = await FakeBotApi.start([TOKEN]);
  hallA = await startTestHall({ config: hallConfig(url, 'hall-a'), adapters: [telegramAdapter(fast)] });
  eventsA = await hallA.events('');
  // hall-a is alone: it polls the bot and takes the long run, and has no room left for the chat's mission.
  await eventually(async () => expect((await hallA.request({ cmd: 'status' })).telegram.ops.state).toBe('polling'));
  release = path.join(tempRoot(), 'release');
  const busy = await hallA.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${release}` });
  await eventsA.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === busy.mission_id);
  hallB = await startTestHall({ config: hallConfig(url, 'hall-b'), adapters: [telegramAdapter(fast)] });
  eventsB = await hallB.events('');
}, 60_000);

afterAll(async () => {
  eventsA?.close();
  eventsB?.close();
  if (release) fs.writeFileSync(release, '');
  await Promise.all([hallA?.stop(), hallB?.stop()]);
  await api?.close();
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
    expect(await eventsA.waitFor((e) => e.type === 'permission.answered' && e.id === spawned.id)).toMatchObject({
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
