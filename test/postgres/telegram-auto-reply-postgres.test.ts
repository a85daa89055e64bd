// auto_reply on a hall whose state is in PostgreSQL: the reply's record goes
// through the same durable channel as on files, so a hall killed between a
// run's end and the send sends it once when it starts again; and a run's end
// that a crash lost is reported again by the next hall, which hears it a
// second time and sends nothing more for it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { telegramAdapter } from '../../src/adapters/telegram/telegram-adapter.js';
import { autoReplyConfig, replyOnceAcrossAKill, sentText, TOKEN } from '../telegram/auto-reply-support.js';
import { FakeBotApi } from '../telegram/fake-bot-api.js';
import { fast, privateMessage } from '../telegram/telegram-support.js';
import { spawnHallProcess } from '../support/hall-client.js';
import { queryRows, usePostgresServer } from '../support/postgres-server.js';
import { eventually, startTestHall, tempRoot, type TestHall } from '../support/test-hall.js';

const server = usePostgresServer();

describe('auto_reply on PostgreSQL', () => {
  it('once, when the hall is killed between the run end and the send', async () => {
    const url = await server.freshDatabase();
    await replyOnceAcrossAKill(`storage: { postgres: "${url}" }\ncluster: team-tg\nhall_id: tg-hall\n`);
  }, 60_000);

  it('a run end heard again after a crash lost it: the reply goes once, and its record goes once it is sent', async () => {
    const url = await server.freshDatabase();
    const api = await FakeBotApi.start([TOKEN]);
    const root = tempRoot();
    const runs = () => queryRows(url, 'SELECT id FROM raider_hall_runs');
    fs.writeFileSync(
      path.join(root, '.raider-hall.yml'),
      autoReplyConfig(api.url, 'auto_reply: true', `storage: { postgres: "${url}" }\ncluster: team-tg\nhall_id: tg-hall\n`),
    );
    // Telegram asks the reply to wait a minute: the hall is killed while it waits.
    api.script('sendMessage', {
      status: 429,
      body: { ok: false, error_code: 429, description: 'Too Many Requests', parameters: { retry_after: 60 } },
    });
    const child = await spawnHallProcess(root);
    let hall: TestHall | undefined;
    const gate = path.join(root, 'go');
    try {
      api.push(TOKEN, privateMessage(42, `until ${gate}`));
      await eventually(async () => expect(await runs()).toHaveLength(1));
      // The run's row as it is while the run goes, to put back as a crash that lost its end would leave it.
      await queryRows(url, 'CREATE TABLE lost_end AS SELECT * FROM raider_hall_runs');
      fs.writeFileSync(gate, '');
      await api.waitFor(sentText(`saw ${gate}`));
      expect(await runs()).toEqual([]);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      await queryRows(url, 'INSERT INTO raider_hall_runs SELECT * FROM lost_end');

      hall = await startTestHall({ root, adapters: [telegramAdapter(fast)] });
      // The next hall finds the run in its ledger, its raider gone: it reports the end again from the run's events file.
      await eventually(async () => expect(await runs()).toEqual([]));
      await api.waitFor((r) => sentText(`saw ${gate}`)(r) && r.messageId !== undefined);
      await eventually(async () =>
        expect(await queryRows(url, "SELECT key FROM raider_hall_kv WHERE ns = 'telegram_auto_reply'")).toEqual([]),
      );
      expect(await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 42, text: 'marker' })).toMatchObject({ ok: 1 });
      const delivered = api.calls('sendMessage').filter((r) => r.messageId !== undefined);
      expect(delivered.map((r) => r.body.text)).toEqual([`saw ${gate}`, 'marker']);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      // The raider outlives the killed hall: a test that failed before the gate would leave it waiting.
      fs.writeFileSync(gate, '');
      await hall?.stop();
      await api.close();
    }
  }, 60_000);
});
