/** The write-ahead log file: appends, a failed append cut off again, sync, truncate. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PREALLOCATED_BYTES, WriteAheadLog } from '../../src/adapters/storage/write-ahead-log.js';
import { tempRoot } from '../support/hall-client.js';

afterEach(() => vi.restoreAllMocks());

function enospc(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
}

/**
 * The log's writes (positional, as it makes them) on a full disk: `fail`
 * tells for each write how many of its bytes land before ENOSPC, or null
 * for a write that works.
 */
function failWrites(fail: (length: number) => number | null): void {
  const realWrite = fs.writeSync;
  vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, data: Buffer, offset: number, length: number, position: number) => {
    const landed = fail(length);
    if (landed === null) return realWrite(fd, data, offset, length, position);
    realWrite(fd, data, offset, landed, position);
    throw enospc();
  }) as typeof fs.writeSync);
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
    let failures = 1;
    failWrites(() => (failures-- > 0 ? 3 : null));
    const asked: string[] = [];
    log.append('{"op":"b"}\n', (err) => {
      asked.push(err.message);
      return true;
    });
    expect(asked).toHaveLength(1);
    expect(log.read()).toBe('{"op":"a"}\n{"op":"b"}\n');

    failures = Number.POSITIVE_INFINITY;
    let askedAgain = 0;
    expect(() => log.append('{"op":"c"}\n', () => ++askedAgain > 0)).toThrow(/ENOSPC/);
    expect(askedAgain).toBe(1);
    expect(log.read()).toBe('{"op":"a"}\n{"op":"b"}\n');
    log.close();
  });

  it('writes lines over zero padding, so an append within it leaves the size of the file alone', () => {
    const file = path.join(tempRoot('wal-'), 'wal.jsonl');
    const log = new WriteAheadLog(file);
    log.append('{"op":"a"}\n', () => false);
    const padded = fs.statSync(file).size;
    expect(padded).toBe(11 + PREALLOCATED_BYTES);
    log.append('{"op":"b"}\n', () => false);
    expect(fs.statSync(file).size).toBe(padded);
    expect(log.bytes).toBe(22);
    const content = fs.readFileSync(file);
    expect(content.subarray(0, 22).toString()).toBe('{"op":"a"}\n{"op":"b"}\n');
    expect(content.subarray(22).every((byte) => byte === 0)).toBe(true);
    // A line that does not fit brings the next padding along.
    const long = `{"op":"${'x'.repeat(PREALLOCATED_BYTES)}"}\n`;
    log.append(long, () => false);
    expect(fs.statSync(file).size).toBe(22 + long.length + PREALLOCATED_BYTES);
    expect(log.read()).toBe(`{"op":"a"}\n{"op":"b"}\n${long}`);
    log.close();
  });

  it('on a disk too full for the padding, appends the line alone without asking for room', () => {
    const log = new WriteAheadLog(path.join(tempRoot('wal-'), 'wal.jsonl'));
    failWrites((length) => (length > PREALLOCATED_BYTES ? 0 : null));
    const asked: string[] = [];
    log.append('{"op":"a"}\n', (err) => {
      asked.push(err.message);
      return false;
    });
    log.append('{"op":"b"}\n', () => false);
    expect(asked).toEqual([]);
    expect(log.read()).toBe('{"op":"a"}\n{"op":"b"}\n');
    log.close();
  });

  it('a log reopened after a crash cuts off the padding and whatever lies past its first zero byte', () => {
    const file = path.join(tempRoot('wal-'), 'wal.jsonl');
    // A machine crash can leave a later, never synced write on disk without the one before it.
    fs.writeFileSync(
      file,
      Buffer.concat([Buffer.from('{"op":"a"}\n'), Buffer.alloc(40), Buffer.from('{"op":"lost"}\n'), Buffer.alloc(100)]),
    );
    const log = new WriteAheadLog(file);
    expect(log.read()).toBe('{"op":"a"}\n');
    expect(log.bytes).toBe(11);
    expect(fs.statSync(file).size).toBe(11);
    log.append('{"op":"b"}\n', () => false);
    expect(log.read()).toBe('{"op":"a"}\n{"op":"b"}\n');
    expect(fs.readFileSync(file, 'utf8')).not.toContain('lost');
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
