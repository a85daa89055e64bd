/**
 * The `auto_reply` restart scenario, on files and on PostgreSQL alike: a hall
 * process is killed (SIGKILL) while Telegram makes it wait to send a run's
 * response; the next hall on the same root sends it, once, and a third one
 * sends nothing more.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { telegramAdapter } from '../../src/adapters/telegram/telegram-adapter.js';
import { spawnHallProcess, startTestHall, tempRoot, type TestHall } from '../support/test-hall.js';
import { FakeBotApi, type FakeRequest } from './fake-bot-api.js';
import { fast, privateMessage } from './telegram-support.js';

export const TOKEN = '12345:good-token';

/** A hall config with the bot `ops` (chat 42 allowed, every chat to bjorn), `storage` lines appended. */
export function autoReplyConfig(url: string, botKeys = 'auto_reply: true', more = ''): string {
  return (
    'raiders: { bjorn: {} }\n' +
    'telegram:\n' +
    `  api_root: ${url}\n` +
    '  bots:\n' +
    `    ops: { token: '${TOKEN}', allowlist: [42], allowed_chats: ['-100500'], routing: { '*': bjorn }, ${botKeys} }\n` +
    more
  );
}

export const sentText = (text: string) => (r: FakeRequest) => r.method === 'sendMessage' && r.body.text === text;
const delivered = (api: FakeBotApi) => api.calls('sendMessage').filter((r) => r.messageId !== undefined);

export async function replyOnceAcrossAKill(more = '', env: Record<string, string> = {}): Promise<void> {
  const api = await FakeBotApi.start([TOKEN]);
  const root = tempRoot();
  let hall: TestHall | undefined;
  const child = await (async () => {
    fs.writeFileSync(path.join(root, '.raider-hall.yml'), autoReplyConfig(api.url, 'auto_reply: true', more));
    // Telegram asks the first send to wait a minute: the hall is killed while it waits.
    api.script('sendMessage', {
      status: 429,
      body: { ok: false, error_code: 429, description: 'Too Many Requests', parameters: { retry_after: 60 } },
    });
    return spawnHallProcess(root, env);
  })();
  try {
    api.push(TOKEN, privateMessage(42, 'answer hello'));
    await api.waitFor(sentText('hello'));
    expect(delivered(api)).toEqual([]);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    hall = await startTestHall({ root, env, adapters: [telegramAdapter(fast)] });
    await api.waitFor((r) => sentText('hello')(r) && r.messageId !== undefined);
    // A second restart sends nothing more: the record says it went.
    await hall.stop();
    hall = await startTestHall({ root, env, adapters: [telegramAdapter(fast)] });
    expect(await hall.request({ cmd: 'telegram_reply', bot: 'ops', chat_id: 42, text: 'marker' })).toMatchObject({ ok: 1 });
    expect(delivered(api).map((r) => r.body.text)).toEqual(['hello', 'marker']);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await hall?.stop();
    await api.close();
  }
}
