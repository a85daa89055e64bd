/** docs/protocol.md is generated from the schemas: it must say what they say. */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_DOC, protocolDoc, REFRESH_COMMAND } from '../../scripts/protocol-doc.js';

describe('docs/protocol.md', () => {
  it('is what the schemas generate', () => {
    const committed = fs.existsSync(PROTOCOL_DOC) ? fs.readFileSync(PROTOCOL_DOC, 'utf8') : '';
    expect(committed === protocolDoc(), `docs/protocol.md is stale: run \`${REFRESH_COMMAND}\` and commit it`).toBe(true);
  });

  it('lists every command and every event', () => {
    const doc = protocolDoc();
    for (const cmd of ['spawn', 'ps', 'status', 'attach', 'logs', 'kill', 'cancel', 'session_reset', 'telegram_reply'])
      expect(doc).toContain(`### \`${cmd}\``);
    for (const type of [
      'raider.spawned',
      'raider.queued',
      'raider.refused',
      'raider.done',
      'session.bound',
      'hall.started',
      'cron.fired',
      'inspect.snapshot',
    ]) {
      expect(doc).toContain(`### \`${type}\``);
    }
  });
});
