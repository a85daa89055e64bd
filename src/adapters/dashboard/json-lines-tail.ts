/** The JSON objects among the last lines of a JSON-lines file (events files, journals). */
import fs from 'node:fs';

/** Null when the file cannot be opened; noise and a half first line are skipped, as the hall skips them. */
export function readJsonLinesTail(file: string, maxBytes: number): { lines: unknown[]; truncated: boolean } | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    const read = fs.readSync(fd, buffer, 0, buffer.length, start);
    let texts = buffer.subarray(0, read).toString('utf8').split('\n');
    if (start > 0) texts = texts.slice(1);
    const lines: unknown[] = [];
    for (const text of texts) {
      if (!text.startsWith('{')) continue;
      try {
        lines.push(JSON.parse(text));
      } catch {
        /* a half line or noise */
      }
    }
    return { lines, truncated: start > 0 };
  } finally {
    fs.closeSync(fd);
  }
}
