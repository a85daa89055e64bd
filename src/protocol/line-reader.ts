/**
 * The one way the hall reads newline-delimited text from a socket, a pipe or
 * a growing file. Every complete line is handed on, however many arrive in
 * one chunk or however one is split across chunks; a line longer than the
 * cap is reported once and skipped up to its end instead of growing memory
 * without bound. A trailing `\r` is dropped.
 */
import type { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';

/** The default cap: one line of the control protocol may hold this many bytes. */
export const MAX_LINE_BYTES = 1024 * 1024;
/** A line the hall writes (a reply, an event) may carry a whole run result or slot log. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export type LineFault = { fault: 'too-long'; maxBytes: number } | { fault: 'invalid-utf8' };

export type LineOrFault = { line: string } | LineFault;

export interface LineReaderOptions {
  /** The longest line kept, in bytes without its newline. */
  maxBytes?: number;
  /**
   * `strict` reports a line that is not UTF-8 as a fault (the control
   * protocol refuses it); `replace` hands it on with U+FFFD for the bad bytes.
   */
  utf8?: 'strict' | 'replace';
}

/** What a fault says to a person; `noun` names what the line is (the control socket says `frame`). */
export function describeLineFault(fault: LineFault, noun = 'line'): string {
  return fault.fault === 'too-long' ? `${noun} too long: a line may hold at most ${fault.maxBytes} bytes` : `invalid UTF-8 in ${noun}`;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

export class LineReader {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;
  private readonly maxBytes: number;
  private readonly decoder: TextDecoder;

  constructor(options: LineReaderOptions = {}) {
    this.maxBytes = options.maxBytes ?? MAX_LINE_BYTES;
    this.decoder = options.utf8 === 'replace' ? lenientUtf8 : strictUtf8;
  }

  /** Feeds a chunk; returns the lines (and faults) it completed, in order. */
  push(chunk: Buffer | string): LineOrFault[] {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const out: LineOrFault[] = [];
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(0x0a, start);
      if (nl < 0) break;
      const piece = bytes.subarray(start, nl);
      start = nl + 1;
      if (this.skipping) {
        // The end of a line already reported as too long.
        this.skipping = false;
        this.reset();
        continue;
      }
      if (this.size + piece.length > this.maxBytes) {
        this.reset();
        out.push(this.tooLong());
        continue;
      }
      const line = this.parts.length > 0 ? Buffer.concat([...this.parts, piece]) : piece;
      this.reset();
      out.push(this.decode(line));
    }
    const rest = bytes.subarray(start);
    if (rest.length > 0 && !this.skipping) {
      if (this.size + rest.length > this.maxBytes) {
        this.reset();
        this.skipping = true;
        out.push(this.tooLong());
      } else {
        // A copy: the caller may reuse its buffer.
        this.parts.push(Buffer.from(rest));
        this.size += rest.length;
      }
    }
    return out;
  }

  /** The input ended: a last line without its newline, if there is one. */
  flush(): LineOrFault[] {
    const skipped = this.skipping;
    const line = Buffer.concat(this.parts);
    this.skipping = false;
    this.reset();
    return skipped || line.length === 0 ? [] : [this.decode(line)];
  }

  private reset(): void {
    this.parts = [];
    this.size = 0;
  }

  private tooLong(): LineFault {
    return { fault: 'too-long', maxBytes: this.maxBytes };
  }

  private decode(line: Buffer): LineOrFault {
    const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
    try {
      return { line: this.decoder.decode(line.subarray(0, end)) };
    } catch {
      return { fault: 'invalid-utf8' };
    }
  }
}

export interface ReadLinesOptions extends LineReaderOptions {
  /** Told about each line skipped (too long, or not UTF-8 in strict mode). */
  onFault?: (fault: LineFault) => void;
}

/** A reader that calls back instead of returning: for byte sources that are not streams (a growing file). */
export interface LineSink {
  push(chunk: Buffer | string): void;
  /** The input ended: hands on a last line without its newline. */
  flush(): void;
}

export function lineSink(onLine: (line: string) => void, options: ReadLinesOptions = {}): LineSink {
  const reader = new LineReader(options);
  const hand = (items: LineOrFault[]): void => {
    for (const item of items) {
      if ('line' in item) onLine(item.line);
      else options.onFault?.(item);
    }
  };
  return {
    push: (chunk) => hand(reader.push(chunk)),
    flush: () => hand(reader.flush()),
  };
}

/**
 * Calls `onLine` with every complete line a stream delivers (a socket, a
 * child's pipe). A line the stream ends without a newline is dropped: the
 * peer did not finish it.
 */
export function readLines(stream: Readable, onLine: (line: string) => void, options: ReadLinesOptions = {}): void {
  const sink = lineSink(onLine, options);
  stream.on('data', (chunk: Buffer | string) => sink.push(chunk));
}
