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

  it('syncs on the event loop while syncs are fast, on the thread pool once they are slow, and back when they are fast again', async () => {
    let now = 0;
    const log = new WriteAheadLog(path.join(tempRoot('wal-'), 'wal.jsonl'), { inlineSyncMs: 1, now: () => now });
    log.append('{"op":"a"}\n', () => false);
    const realSyncSync = fs.fdatasyncSync;
    const realSync = fs.fdatasync;
    // Each sync takes what the disk is set to, on the test's clock.
    let diskMs = 0.2;
    const inline = vi.spyOn(fs, 'fdatasyncSync').mockImplementation((fd: number) => {
      now += diskMs;
      realSyncSync(fd);
    });
    const pooled = vi.spyOn(fs, 'fdatasync').mockImplementation(((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      now += diskMs;
      realSync(fd, cb);
    }) as typeof fs.fdatasync);
    await log.sync();
    expect([inline.mock.calls.length, pooled.mock.calls.length]).toEqual([1, 0]);
    // The disk slows down: one slow sync is enough to leave the loop.
    diskMs = 20;
    await log.sync();
    expect(log.syncInline).toBe(false);
    await log.sync();
    expect([inline.mock.calls.length, pooled.mock.calls.length]).toEqual([2, 1]);
    // Fast again: the average comes down and the loop takes the syncs back.
    diskMs = 0.2;
    for (let i = 0; i < 30 && !log.syncInline; i++) await log.sync();
    expect(log.syncInline).toBe(true);
    log.close();
  });

  it('never syncs on the event loop when told so', async () => {
    const log = new WriteAheadLog(path.join(tempRoot('wal-'), 'wal.jsonl'), { inlineSyncMs: 0 });
    const inline = vi.spyOn(fs, 'fdatasyncSync');
    await log.sync();
    await log.sync();
    expect(inline).not.toHaveBeenCalled();
    log.close();
  });
});
