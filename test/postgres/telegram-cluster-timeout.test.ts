// A question of a chat's run on a shared cluster that nobody answers. hall-a
// polls the bot and asks the question in the chat; hall-b runs the raider and
// asks through the database. Whichever hall's permission_timeout runs out
// first decides, and the other learns it from the database: everywhere the
// end reads as a timeout (the event, the chat's message, the database's
// answer), never as the ACP client's no or the run's end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeBotApi } from '../telegram/fake-bot-api.js';
import { privateMessage } from '../telegram/telegram-support.js';
import { queryRows, usePostgresServer } from '../support/postgres-server.js';
import type { EventTap } from '../support/test-hall.js';
import { type BusyPollerPair, startBusyPollerPair, TOKEN } from './telegram-cluster-support.js';

const server = usePostgresServer();

function hallConfig(url: string, apiUrl: string, id: string, timeoutS: number): string {
  return (
    `raiders: { bjorn: {} }\nstorage: { postgres: "${url}" }\ncluster: team-tg-timeout\ncluster_mode: shared\n` +
    `hall_id: ${id}\nlease_seconds: 5\nmax_running: 1\npermission_timeout: ${timeoutS}\n` +
    'telegram:\n' +
    `  api_root: ${apiUrl}\n` +
    '  bots:\n' +
    `    ops: { token: '${TOKEN}', allowlist: [42], routing: { '*': bjorn }, questions: true }\n`
  );
}

describe.each([
  { decides: 'the polling hall', timeoutA: 2, timeoutB: 60 },
  { decides: "the run's hall", timeoutA: 60, timeoutB: 2 },
])('Telegram questions on a shared cluster: a timeout on $decides', ({ timeoutA, timeoutB }) => {
  let url: string;
  let pair: BusyPollerPair;
  let api: FakeBotApi;
  let eventsA: EventTap;
  let eventsB: EventTap;

  beforeAll(async () => {
    url = await server.freshDatabase();
    // hall-a polls the bot and is full, so the chat's mission runs on hall-b.
    pair = await startBusyPollerPair((apiRoot, id) => hallConfig(url, apiRoot, id, id === 'hall-a' ? timeoutA : timeoutB));
    ({ api, eventsA, eventsB } = pair);
  }, 60_000);

  afterAll(async () => {
    await pair?.stop();
  }, 60_000);

  it('is recorded as a timeout by the polling hall, in the chat and in the database', async () => {
    api.push(TOKEN, privateMessage(42, 'ask 1'));
    const spawned = await eventsB.waitFor((e) => e.type === 'raider.spawned' && e.binding === 'telegram:ops:42');
    expect(spawned.hall).toBe('hall-b');
    const question = await api.waitFor((r) => r.method === 'sendMessage' && r.body.reply_markup !== undefined, 20_000);
    const answered = await eventsA.waitFor((e) => e.type === 'permission.answered' && e.id === spawned.id && e.hall === 'hall-a', 20_000);
    expect(answered).toMatchObject({ answer: 'no', by: 'timeout' });
    const edit = await api.waitFor((r) => r.method === 'editMessageText' && r.body.message_id === question.messageId);
    expect(edit.body.text).toMatch(/Refused: no answer within permission_timeout\.$/);
    const done = await eventsB.waitFor((e) => e.type === 'raider.done' && e.id === spawned.id, 20_000);
    expect(done.response).toBe('["no"]');
    const rows = await queryRows(url, 'SELECT answer FROM raider_hall_questions WHERE run_id = $1', [spawned.id]);
    expect(rows.map((r) => r.answer)).toEqual([expect.objectContaining({ answer: 'no', face: 'timeout' })]);
  });
});
