// auto_reply on a hall whose state is in PostgreSQL: the reply's record goes
// through the same durable channel as on files, so a hall killed between a
// run's end and the send sends it once when it starts again.
import { describe, it } from 'vitest';
import { replyOnceAcrossAKill } from '../telegram/auto-reply-support.js';
import { usePostgresServer } from '../support/postgres-server.js';

const server = usePostgresServer();

describe('auto_reply on PostgreSQL', () => {
  it('once, when the hall is killed between the run end and the send', async () => {
    const url = await server.freshDatabase();
    await replyOnceAcrossAKill(`storage: { postgres: "${url}" }\ncluster: team-tg\nhall_id: tg-hall\n`);
  }, 60_000);
});
