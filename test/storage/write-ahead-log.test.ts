/** The write-ahead log file: appends, a failed append cut off again, sync, truncate. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WriteAheadLog } from '../../src/adapters/storage/write-ahead-log.js';
import { tempRoot } from '../support/hall-client.js';

afterEach(() => vi.restoreAllMocks());

function enospc(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
}

describe('WriteAheadLog', () => {
  it('appends lines at once, counts its bytes, syncs, and empties on truncate', async () => {
    const log = new WriteAheadLog(path.join(tempRoot('wal-'), 'wal.jsonl'));
    expect(log.read()).toBe('');
    log.append('{"op":"a"}\n', () => false);
    log.append('{"op":"b"}\n', () => false);
    expect(log.read()).toBe('{"op":"a"}\n{"op":"b"}\n');
    expect(log.bytes).toBe(22);
    await log.sync();
    await log.truncate();
    expect(log.read()).toBe('');
    expect(log.bytes).toBe(0);
    log.append('{"op":"c"}\n', () => false);
    expect(log.read()).toBe('{"op":"c"}\n');
    log.close();
  });

  it('a full disk asks for room once and retries; a second failure is thrown and leaves no torn line', () => {
    const file = path.join(tempRoot('wal-'), 'wal.jsonl');
    const log = new WriteAheadLog(file);
    log.append('{"op":"a"}\n', () => false);
    const realWrite = fs.writeSync;
    let failures = 1;
    vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, data: Buffer, offset: number, length: number) => {
      if (failures-- > 0) {
        realWrite(fd, data, offset, 3);
        throw enospc();
      }
      return realWrite(fd, data, offset, length);
    }) as typeof fs.writeSync);
    const asked: string[] = [];
    log.append('{"op":"b"}\n', (err) => {
      asked.push(err.message);
      return true;
    });
    expect(asked).toHaveLength(1);
    expect(log.read()).toBe('{"op":"a"}\n{"op":"b"}\n');

    failures = 2;
    expect(() => log.append('{"op":"c"}\n', () => true)).toThrow(/ENOSPC/);
    expect(log.read()).toBe('{"op":"a"}\n{"op":"b"}\n');
    log.close();
  });
});
