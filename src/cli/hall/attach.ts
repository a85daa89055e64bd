/**
 * `attach` and `spawn --attach`: print a run's events as it goes, then its
 * end ("run ID ended: failed: ..."), and exit like the built-in raider: 0
 * completed, 1 failed, 130 cancelled, 143 interrupted. A run that already
 * ended is replayed from its events file, so `attach` of it says how it
 * ended instead of "raider not found"; one that ended on another hall of a
 * shared cluster, from the asked hall's copy of its files.
 */
import fs from 'node:fs';
import { readDocumentOrNull } from '../../adapters/storage/events-file.js';
import { eventsPath, hallPaths } from '../../ports/hall-paths.js';
import { raiderSaid, runLog } from '../../adapters/storage/slot-logs.js';
import { resultOf } from '../../domain/log-lines.js';
import { isSafeRunId } from '../../domain/run-id.js';
import type { BusEnvelope } from '../../protocol/hall-client.js';
import { JsonObject, parseJsonLine } from '../../protocol/json-line.js';
import type { Answer } from '../../protocol/replies.js';
import { followFile, lineSplitter } from './follow.js';
import { RunEventPrinter, styleFor } from './render.js';

export interface RunEnd {
  status: string;
  error?: string;
}

/** The exit code of `attach` for a run that ended so: the built-in raider's. */
export function exitCodeOfEnd(end: RunEnd | null): number {
  switch (end?.status) {
    case 'completed':
      return 0;
    case 'cancelled':
      return 130;
    case 'interrupted':
      return 143;
    default:
      return 1;
  }
}

export function endLine(id: string, end: RunEnd | null): string {
  if (end === null) return `run ${id} ended; how is not known (the hall went away)`;
  return `run ${id} ended: ${end.status}${end.error ? `: ${end.error}` : ''}`;
}

/** The end of a `raider.done` event or a `run.finished` document; a hall that had to escalate says so first. */
function endOfDone(event: Readonly<Record<string, unknown>>): RunEnd {
  const status = typeof event.status === 'string' ? event.status : 'failed';
  const why = [event.hall_stop, event.error].filter((text): text is string => typeof text === 'string' && text !== '');
  return why.length > 0 ? { status, error: why.join(': ') } : { status };
}

/** How an ended run ended: its run.finished, else the result line of its slot log; null when neither is on disk. */
async function recordedEnd(root: string, id: string): Promise<RunEnd | null> {
  const paths = hallPaths(root);
  return endIn(eventsPath(paths, id), id, async () => {
    const log = await runLog(paths, id, undefined);
    return 'log' in log ? log.log : null;
  });
}

/** The end a run's events file (its run.finished) or its log lines (their result line) say. */
async function endIn(events: string, id: string, logLines: () => Promise<string | null>): Promise<RunEnd | null> {
  const document = readDocumentOrNull(events);
  if (document !== null) return endOfDone(document);
  const log = await logLines();
  const result = log === null ? null : resultOf(log, id);
  if (result === null) return null;
  return result.status === 'completed' || result.text === '' ? { status: result.status } : { status: result.status, error: result.text };
}

/** Prints each events-file line: as it is with --json, rendered for a person otherwise (streamed text as it comes). */
function eventPrinter(json: boolean): { push(chunk: Buffer): void; flush(): void } {
  const output = new RunEventPrinter(styleFor(process.stdout));
  const lines = lineSplitter((line) => {
    if (json) {
      process.stdout.write(`${line}\n`);
      return;
    }
    const event = parseJsonLine(line, JsonObject);
    if (event === null) return;
    const text = output.write(event);
    if (text !== '') process.stdout.write(text);
  });
  return {
    push: (chunk) => lines.push(chunk),
    flush: () => {
      lines.flush();
      const end = output.end();
      if (end !== '') process.stdout.write(end);
    },
  };
}

/** Says how the run ended (a completed live run already showed it: only its answer, as the raider does) and returns the exit code. */
function finish(id: string, end: RunEnd | null, always: boolean): number {
  if (always || end?.status !== 'completed') process.stderr.write(`${endLine(id, end)}\n`);
  return exitCodeOfEnd(end);
}

/** Follows a running run (the hall's attach reply) to its end; returns the exit code. */
export async function attachRunning(
  root: string,
  socketPath: string,
  reply: Pick<Answer<'attach'>, 'id' | 'events_path'>,
  json: boolean,
): Promise<number> {
  const id = String(reply.id);
  if (typeof reply.events_path !== 'string') throw new Error(`Hall: raider ${id} has no event stream`);
  const printer = eventPrinter(json);
  // Ctrl-C leaves the run alone: say so, and how to end it.
  const detach = (): void => {
    printer.flush();
    process.stderr.write(`Detached: run ${id} goes on. Cancel it with: raider hall cancel ${id}\n`);
    process.exit(130);
  };
  process.once('SIGINT', detach);
  let done: BusEnvelope | null;
  try {
    done = await followFile({ socketPath, runId: id, file: reply.events_path, onChunk: (chunk) => printer.push(chunk) });
  } finally {
    process.off('SIGINT', detach);
  }
  printer.flush();
  const end = done !== null ? endOfDone(done) : await recordedEnd(root, id);
  if (end?.status === 'failed' && readDocumentOrNull(reply.events_path) === null) {
    for (const line of await raiderSaid(hallPaths(root), id)) process.stderr.write(`raider ${id}: ${line}\n`);
  }
  return finish(id, end, false);
}

/** Replays a run that has ended from its files; null when there is no such run on disk. */
export async function replayEnded(root: string, id: string, json: boolean): Promise<number | null> {
  if (!isSafeRunId(id)) return null;
  const end = await recordedEnd(root, id);
  if (end === null) return null;
  return replay(id, eventsPath(hallPaths(root), id), end, json);
}

/**
 * Replays a run that ended on another hall of a shared cluster from the asked hall's copy of its files
 * (an attach reply with `ended`), as a run of this hall that ended is replayed from its own.
 */
export async function replayCopy(reply: Pick<Answer<'attach'>, 'id' | 'events_path' | 'log_path'>, json: boolean): Promise<number> {
  const id = String(reply.id);
  const end = await endIn(reply.events_path, id, async () => readOrNull(reply.log_path)?.toString('utf8') ?? null);
  return replay(id, reply.events_path, end, json);
}

function replay(id: string, events: string, end: RunEnd | null, json: boolean): number {
  // Pruned: the end alone.
  const lines = readOrNull(events);
  if (lines !== null) {
    const printer = eventPrinter(json);
    printer.push(lines);
    printer.flush();
  }
  return finish(id, end, true);
}

function readOrNull(file: string): Buffer | null {
  try {
    return fs.readFileSync(file);
  } catch {
    return null;
  }
}
