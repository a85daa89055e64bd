/**
 * Splits a byte stream into lines: every complete line is handed on, however
 * many arrive in one read, and a line longer than the limit is reported once
 * and skipped up to its end instead of growing without bound.
 */
export const MAX_FRAME_BYTES = 1024 * 1024;

export type FrameOrError = { line: string } | { error: string };

export class FrameReader {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;

  constructor(private readonly maxBytes: number = MAX_FRAME_BYTES) {}

  /** Feeds a chunk; returns the complete lines (and errors) it finished. */
  push(chunk: Buffer): FrameOrError[] {
    const out: FrameOrError[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.skipping) {
        this.skipping = false;
        this.reset();
        continue;
      }
      if (this.size + piece.length > this.maxBytes) {
        this.reset();
        out.push({ error: tooLong(this.maxBytes) });
        continue;
      }
      const line = this.parts.length > 0 ? Buffer.concat([...this.parts, piece]) : piece;
      this.reset();
      out.push(decode(line));
    }
    const rest = chunk.subarray(start);
    if (rest.length > 0 && !this.skipping) {
      if (this.size + rest.length > this.maxBytes) {
        this.reset();
        this.skipping = true;
        out.push({ error: tooLong(this.maxBytes) });
      } else {
        this.parts.push(Buffer.from(rest));
        this.size += rest.length;
      }
    }
    return out;
  }

  private reset(): void {
    this.parts = [];
    this.size = 0;
  }
}

function tooLong(max: number): string {
  return `frame too long: a line may hold at most ${max} bytes`;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decode(line: Buffer): FrameOrError {
  const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
  try {
    return { line: utf8.decode(line.subarray(0, end)) };
  } catch {
    return { error: 'invalid UTF-8 in frame' };
  }
}
