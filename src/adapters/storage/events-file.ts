/**
 * Reading a run's events file (the raider's stdout): the last line that is a
 * JSON object of type `run.finished` is the run's document. Noise, half lines
 * and other events are skipped; the file is read backwards in blocks, so a
 * raider that wrote 100 MB costs no more than its tail.
 */
import fs from 'node:fs';
import type { RunDocument } from '../../domain/outcome.js';

const BLOCK = 64 * 1024;

/**
 * Synchronous on purpose: it reads a few blocks of a local file, which costs
 * less than the thread-pool round trips of the asynchronous calls.
 */
export function readRunDocument(file: string): RunDocument | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const { size } = fs.fstatSync(fd);
    let end = size;
    // Bytes of a line whose start lies in an earlier block.
    let carry = Buffer.alloc(0);
    while (end > 0) {
      const start = Math.max(0, end - BLOCK);
      const block = Buffer.alloc(end - start);
      fs.readSync(fd, block, 0, block.length, start);
      let buf = Buffer.concat([block, carry]);
      let cut = buf.length;
      for (let i = buf.length - 1; i >= 0; i--) {
        if (buf[i] !== 0x0a) continue;
        const doc = parseFinished(buf.subarray(i + 1, cut));
        if (doc) return doc;
        cut = i;
      }
      carry = buf.subarray(0, cut);
      if (start === 0) return parseFinished(carry);
      end = start;
      buf = Buffer.alloc(0);
    }
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

function parseFinished(line: Buffer): RunDocument | null {
  // Cheap test first: most lines are other events.
  if (line.length === 0 || line.indexOf('run.finished') < 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(line));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const event = value as Record<string, unknown>;
  if (event.type !== 'run.finished') return null;
  const { type: _type, seq: _seq, time: _time, ...document } = event;
  return document;
}

/** The document, or null when there is none or the file cannot be read. */
export function readDocumentOrNull(file: string): RunDocument | null {
  try {
    return readRunDocument(file);
  } catch {
    return null;
  }
}
