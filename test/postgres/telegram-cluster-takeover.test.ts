// A hall that starts polling a bot on a shared cluster answers at once for
// the bot's chats that have a run going or a mission waiting, not only after
// each chat's next message. hall-c (no Telegram of its own) runs the chat's
// missions: one that holds the chat's binding, and one behind it that will
// ask a question. hall-b then takes the bot's polling; the chat sends
// nothing more, yet when the second mission runs on hall-c its question is
// asked in the chat by hall-b, and a press there answers it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { telegramAdapter } from '../../src/adapters/telegram/telegram-adapter.js';
import { FakeBotApi } from '../telegram/fake-bot-api.js';
import { fast, press } from '../telegram/telegram-support.js';
import { queryRows, usePostgresServer } from '../support/postgres-server.js';
import { eventually, startTestHall, tempRoot, type EventTap, type TestHall } from '../support/test-hall.js';

const server = usePostgresServer();
const TOKEN = '12345:good-token';
const CHAT = 'telegram:ops:42';

let url: string;
let api: FakeBotApi;
let hallB: TestHall | undefined;
let hallC: TestHall;
let eventsB: EventTap | undefined;
let eventsC: EventTap;
const gates: string[] = [];

function hallConfig(id: string, telegram: boolean): string {
  return (
    `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: team-tg-takeover\ncluster_mode: shared\n` +
    `hall_id: ${id}\nlease_seconds: 5\nmax_running: 1\npermission_timeout: 60\n` +
    (telegram
      ? 'telegram:\n' +
        `  api_root: ${api.url}\n` +
        '  bots:\n' +
        `    ops: { token: '${TOKEN}', allowlist: [42], routing: { '*': bjorn }, questions: true }\n`
      : '')
  );
}

function gate(): string {
  const file = path.join(tempRoot(), 'gate');
  gates.push(file);
  return file;
}

beforeAll(async () => {
  url = await server.freshDatabase();
  api = await FakeBotApi.start([TOKEN]);
  hallC = await startTestHall({ config: hallConfig('hall-c', false), adapters: [telegramAdapter(fast)] });
  eventsC = await hallC.events('');
}, 60_000);

afterAll(async () => {
  eventsB?.close();
  eventsC?.close();
  for (const file of gates) fs.writeFileSync(file, '');
  await Promise.all([hallB?.stop(), hallC?.stop()]);
  await api?.close();
}, 60_000);

describe('a hall that takes the polling of a bot', () => {
  it('answers at once for the chats with runs or waiting missions: a question asked later is asked in the chat, with no new message', async () => {
    const held = gate();
    const first = await hallC.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${held}`, binding: CHAT });
    await eventsC.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === first.mission_id);
    const asking = await hallC.request({ cmd: 'spawn', name: 'bjorn', mission: 'ask 1', binding: CHAT });

    hallB = await startTestHall({ config: hallConfig('hall-b', true), adapters: [telegramAdapter(fast)] });
    eventsB = await hallB.events('');
    const polling = hallB;
    await eventually(async () => expect((await polling.request({ cmd: 'status' })).telegram.ops.state).toBe('polling'));
    // hall-b is full, so the chat's next mission runs on hall-c again.
    const busy = await hallB.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${gate()}` });
    expect((await eventsB.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === busy.mission_id)).hall).toBe('hall-b');
    await eventually(async () =>
      expect(await queryRows(url, 'SELECT hall FROM raider_hall_answerers WHERE binding = $1', [CHAT])).toEqual([{ hall: 'hall-b' }]),
    );

    fs.writeFileSync(held, '');
    const run = await eventsC.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === asking.mission_id, 20_000);
    expect(run.hall).toBe('hall-c');
    const question = await api.waitFor((r) => r.method === 'sendMessage' && r.body.reply_markup !== undefined, 20_000);
    expect(question.body).toMatchObject({ chat_id: '42' });
    expect(question.body.text).toContain(`run ${run.id}`);
    api.push(TOKEN, press(question, 42, 'Allow once'));
    expect((await eventsC.waitFor((e) => e.type === 'raider.done' && e.id === run.id, 20_000)).response).toBe('["once"]');
    expect(api.requests.filter((r) => r.method === 'sendMessage' && r.body.reply_markup !== undefined)).toHaveLength(1);
  });
});
