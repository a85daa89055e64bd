/**
 * Reading a run's events file (the raider's stdout): the last line that is a
 * JSON object of type `run.finished` is the run's document. Noise, half lines
 * and other events are skipped; the file is read backwards in blocks, so a
 * raider that wrote 100 MB costs no more than its tail.
 */
import fs from 'node:fs';
import { z } from 'zod';
import type { RunDocument } from '../../domain/outcome.js';
import { errorCode } from '../../domain/error-message.js';
import { RunFinishedLine } from '../../protocol/raider-stream.js';
import { parseJsonLine } from '../../protocol/json-line.js';

const BLOCK = 64 * 1024;
/**
 * A line longer than this is not read as a result (it is skipped): a raider
 * that writes gigabytes without a newline must not take the hall's memory.
 */
export const MAX_RESULT_LINE_BYTES = 64 * 1024 * 1024;

/**
 * Synchronous on purpose: it reads a few blocks of a local file, which costs
 * less than the thread-pool round trips of the asynchronous calls. Each byte
 * is looked at once, so a 10 MB result line costs 10 MB of reading, not the
 * square of its blocks.
 */
export function readRunDocument(file: string): RunDocument | null {
  const heldFd = held.get(file);
  if (heldFd !== undefined) return lastFinished(heldFd, fs.fstatSync(heldFd).size);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return null;
    throw err;
  }
  try {
    return lastFinished(fd, fs.fstatSync(fd).size);
  } finally {
    fs.closeSync(fd);
  }
}

/** The last run.finished among the first `size` bytes of `fd`, reading backwards. */
export function lastFinished(fd: number, size: number): RunDocument | null {
  let end = size;
  // The end of the line being read: bytes that came after the newest newline seen, newest last.
  let carry: Buffer[] = [];
  let carryBytes = 0;
  // The line being read is too long to be a result: skip to its start.
  let skipping = false;
  while (end > 0) {
    const start = Math.max(0, end - BLOCK);
    const buffer = Buffer.allocUnsafe(end - start);
    // A file that shrank meanwhile gives fewer bytes: only what was read counts.
    const block = buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, start));
    let cut = block.length;
    for (let i = block.lastIndexOf(0x0a); i >= 0; i = i > 0 ? block.lastIndexOf(0x0a, i - 1) : -1) {
      if (!skipping) {
        const piece = block.subarray(i + 1, cut);
        const doc = parseFinished(carry.length === 0 ? piece : Buffer.concat([piece, ...carry]));
        if (doc) return doc;
      }
      carry = [];
      carryBytes = 0;
      skipping = false;
      cut = i;
    }
    if (!skipping && cut > 0) {
      carry.unshift(block.subarray(0, cut));
      carryBytes += cut;
      if (carryBytes > MAX_RESULT_LINE_BYTES) {
        carry = [];
        carryBytes = 0;
        skipping = true;
      }
    }
    end = start;
  }
  return skipping ? null : parseFinished(Buffer.concat(carry));
}

/** The last run.finished in a run's events held in memory (the cluster's copy of another hall's run). */
export function documentIn(events: Buffer): RunDocument | null {
  let end = events.length;
  while (end > 0) {
    const newline = events.lastIndexOf(0x0a, end - 1);
    const doc = parseFinished(events.subarray(newline + 1, end));
    if (doc) return doc;
    end = newline;
  }
  return null;
}

/** Invalid UTF-8 in a result line is replaced (U+FFFD), not a reason to lose the result. */
const utf8 = new TextDecoder('utf-8');

function parseFinished(line: Buffer): RunDocument | null {
  // Cheap test first: most lines are other events.
  if (line.length === 0 || line.indexOf('run.finished') < 0) return null;
  const finished = parseJsonLine(utf8.decode(line), RunFinishedLine);
  if (finished === null) return null;
  const { type: _type, seq: _seq, time: _time, ...document } = finished;
  return document;
}

/**
 * Read descriptors of the events files of running raiders, by path: a run's
 * result is read from its own file even when somebody deleted or replaced the
 * file (or the whole logs directory) while the raider wrote it.
 */
const held = new Map<string, number>();

/** Opens `file` for reading and keeps it until `releaseEventsFile`. */
export function holdEventsFile(file: string): void {
  releaseEventsFile(file);
  held.set(file, fs.openSync(file, 'r'));
}

export function releaseEventsFile(file: string): void {
  const fd = held.get(file);
  if (fd === undefined) return;
  held.delete(file);
  try {
    fs.closeSync(fd);
  } catch {
    /* already closed */
  }
}

/** The document, or null when there is none or the file cannot be read. */
export function readDocumentOrNull(file: string): RunDocument | null {
  try {
    return readRunDocument(file);
  } catch {
    return null;
  }
}

/**
 * The agent session an ACP bridge said it prompted (its `session` event, near the head of its events
 * file), for a run that ended without its `run.finished` (the bridge was killed): the binding's next run
 * goes on with it all the same. Null when the head says none.
 */
export function openedAgentSession(file: string): { id: string; agent: string } | null {
  let head: string;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const buf = Buffer.alloc(BLOCK);
      head = utf8.decode(buf.subarray(0, fs.readSync(fd, buf, 0, BLOCK, 0)));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  let agent: string | undefined;
  let id: string | undefined;
  for (const line of head.split('\n')) {
    const read = parseJsonLine(line, bridgeHeadEvent);
    if (read === null) continue;
    if (read.type === 'run.started') agent = read.agent;
    else id = read.agent_session;
  }
  return agent !== undefined && id !== undefined ? { id, agent } : null;
}

const bridgeHeadEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('run.started'), agent: z.string() }),
  z.object({ type: z.literal('session'), agent_session: z.string().min(1) }),
]);
