/**
 * What the hall remembers of ACP sessions (the `acp` namespace of a real file
 * store) is read back through its schema: a value that does not read as a
 * session (written by hand, or by something else) is no session, for
 * session/load and for session/list alike, and the others still list.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AcpSessionStore } from '../../src/adapters/acp/acp-session-store.js';
import { FileStateStore } from '../../src/adapters/storage/file-state-store.js';
import { tempRoot } from '../support/hall-client.js';

const open: FileStateStore[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

describe('the ACP session store', () => {
  it('reads back what it kept, newest first, and takes a value that does not read as a session for none', async () => {
    const store = await FileStateStore.open(path.join(tempRoot('acp-sessions-'), 'state'), { warn: () => {} });
    open.push(store);
    const sessions = new AcpSessionStore(store);
    await sessions.put('s-old', { raider: 'bjorn', cwd: '/r', mode: 'default', updatedAt: '2026-12-01T00:00:00.000Z' });
    await sessions.put('s-new', { raider: 'ulf', cwd: '/r', mode: 'plan', title: 'fix it', updatedAt: '2026-12-02T00:00:00.000Z' });
    for (const [key, value] of [
      ['s-odd', { raider: 'bjorn', cwd: '/r', mode: 7, updatedAt: '2026-12-03T00:00:00.000Z' }],
      ['s-text', 'just text'],
    ] as const) {
      store.apply({ op: 'set', ns: 'acp', key, value });
    }
    await store.commit();

    expect(sessions.get('s-new')).toEqual({
      raider: 'ulf',
      cwd: '/r',
      mode: 'plan',
      title: 'fix it',
      updatedAt: '2026-12-02T00:00:00.000Z',
    });
    expect(sessions.get('s-odd')).toBeUndefined();
    expect(sessions.get('s-text')).toBeUndefined();
    expect(sessions.list().map((s) => s.sessionId)).toEqual(['s-new', 's-old']);
  });
});
