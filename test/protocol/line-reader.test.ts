/** The one line reader: lines however the bytes are split, a cap that skips and reports, UTF-8 handling. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { describeLineFault, LineReader, readLines, type LineFault } from '../../src/protocol/line-reader.js';

describe('LineReader', () => {
  it('hands on every line of one chunk and keeps a partial line for the next', () => {
    const reader = new LineReader();
    expect(reader.push(Buffer.from('a\nbb\ncc'))).toEqual([{ line: 'a' }, { line: 'bb' }]);
    expect(reader.push('c\r\n')).toEqual([{ line: 'ccc' }]);
  });

  it('joins a line split byte by byte, multi-byte characters included', () => {
    const reader = new LineReader();
    const bytes = Buffer.from('grüße ✓\n');
    const out = [...bytes].flatMap((b) => reader.push(Buffer.from([b])));
    expect(out).toEqual([{ line: 'grüße ✓' }]);
  });

  it('reports a line over the cap once, skips it to its end, and reads on', () => {
    const reader = new LineReader({ maxBytes: 8 });
    expect(reader.push('12345')).toEqual([]);
    expect(reader.push('6789')).toEqual([{ fault: 'too-long', maxBytes: 8 }]);
    // Still the same line: nothing more is kept or reported until its newline.
    expect(reader.push('x'.repeat(1000))).toEqual([]);
    expect(reader.push('x\nok\n')).toEqual([{ line: 'ok' }]);
    expect(reader.push('123456789\n')).toEqual([{ fault: 'too-long', maxBytes: 8 }]);
    expect(reader.push('12345678\n')).toEqual([{ line: '12345678' }]);
  });

  it('refuses invalid UTF-8 in strict mode and replaces it in replace mode', () => {
    const bad = Buffer.from([0x61, 0xff, 0x62, 0x0a]);
    expect(new LineReader().push(bad)).toEqual([{ fault: 'invalid-utf8' }]);
    expect(new LineReader({ utf8: 'replace' }).push(bad)).toEqual([{ line: 'a\uFFFDb' }]);
  });

  it('flush hands on a last line without its newline, but not the tail of a skipped one', () => {
    const reader = new LineReader({ maxBytes: 4 });
    reader.push('ab');
    expect(reader.flush()).toEqual([{ line: 'ab' }]);
    expect(reader.flush()).toEqual([]);
    reader.push('abcdef');
    expect(reader.flush()).toEqual([]);
  });

  it('says what went wrong in words, naming what the line is', () => {
    expect(describeLineFault({ fault: 'too-long', maxBytes: 10 }, 'frame')).toBe('frame too long: a line may hold at most 10 bytes');
    expect(describeLineFault({ fault: 'invalid-utf8' })).toBe('invalid UTF-8 in line');
  });
});

describe('readLines', () => {
  it('delivers the lines of a stream and reports a line over the cap', () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    const faults: LineFault[] = [];
    readLines(stream, (line) => lines.push(line), { maxBytes: 16, onFault: (f) => faults.push(f) });
    stream.write('one\ntw');
    stream.write(`o\n${'z'.repeat(40)}`);
    stream.write('\nthree\n');
    expect(lines).toEqual(['one', 'two', 'three']);
    expect(faults).toEqual([{ fault: 'too-long', maxBytes: 16 }]);
  });
});
