/**
 * Reading a run's result from the end of its events file, against a plain
 * oracle (split the whole file into lines, take the last run.finished): lines
 * across block boundaries, long lines, invalid UTF-8, a torn last line, and
 * the bound on a result line's length.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { documentIn, MAX_RESULT_LINE_BYTES, readRunDocument } from '../../src/adapters/storage/events-file.js';

function oracle(data: Buffer): unknown {
  const lines = data.toString('utf8').split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const value = JSON.parse(lines[i]!) as Record<string, unknown>;
      if (value && typeof value === 'object' && !Array.isArray(value) && value.type === 'run.finished') {
        const { type: _t, seq: _s, time: _tm, ...doc } = value;
        return doc;
      }
    } catch {
      /* not a result */
    }
  }
  return null;
}

function prng(seed: number) {
  let a = seed >>> 0;
  return (n: number) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'events-file-'));

function read(data: Buffer): unknown {
  const file = path.join(dir, 'run.events.jsonl');
  fs.writeFileSync(file, data);
  return readRunDocument(file);
}

describe('readRunDocument', () => {
  it('agrees with reading the whole file (and documentIn with the same bytes in memory), for 300 random files of lines that cross 64 KiB blocks', () => {
    const int = prng(9);
    for (let round = 0; round < 300; round++) {
      const parts: Buffer[] = [];
      const lines = 1 + int(12);
      for (let i = 0; i < lines; i++) {
        switch (int(6)) {
          case 0:
            parts.push(
              Buffer.from(
                `${JSON.stringify({ type: 'run.finished', status: 'completed', response: `r${round}-${i}-${'z'.repeat(int(3) * 40_000)}`, seq: i })}\n`,
              ),
            );
            break;
          case 1:
            parts.push(Buffer.from(`${'n'.repeat(int(150_000))}\n`));
            break;
          case 2:
            parts.push(Buffer.from([0xff, 0x0a, 0xc0, 0x22, 0x0a]));
            break;
          case 3:
            parts.push(Buffer.from(`{"type":"run.finished","half":"${'h'.repeat(int(70_000))}`));
            break;
          case 4:
            parts.push(Buffer.from('\n\n'));
            break;
          default:
            parts.push(Buffer.from(`${JSON.stringify({ type: 'message', content: 'm'.repeat(int(100_000)) })}\n`));
        }
      }
      const data = Buffer.concat(parts);
      expect(read(data), `round ${round}`).toEqual(oracle(data));
      // The same events held in memory (the cluster's copy of another hall's run).
      expect(documentIn(data), `round ${round} in memory`).toEqual(oracle(data));
    }
  });

  it('replaces invalid UTF-8 in the result instead of losing it', () => {
    const data = Buffer.concat([
      Buffer.from('{"type":"run.finished","status":"completed","response":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}\n'),
    ]);
    expect(read(data)).toEqual({ status: 'completed', response: 'caf\ufffd' });
  });

  it('skips a line longer than the bound and finds the result before it', () => {
    const result = Buffer.from('{"type":"run.finished","status":"completed","response":"before"}\n');
    const long = Buffer.alloc(MAX_RESULT_LINE_BYTES + 10, 0x61);
    expect(read(Buffer.concat([result, long]))).toEqual({ status: 'completed', response: 'before' });
  });

  it('an empty or missing file has no result', () => {
    expect(read(Buffer.alloc(0))).toBeNull();
    expect(readRunDocument(path.join(dir, 'missing.events.jsonl'))).toBeNull();
  });
});
