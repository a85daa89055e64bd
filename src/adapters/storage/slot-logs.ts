/**
 * Slot logs (`SLOT.log`: raider stderr plus `[hall]` lines) and per-run events
 * files (`ID.events.jsonl`), with their retention rules.
 */
import fs from 'node:fs';
import path from 'node:path';
import { hasResultLine, raiderLineText, resultLine, resultText, runSection } from '../../domain/log-lines.js';
import { runOutcome } from '../../domain/outcome.js';
import { parseRunId } from '../../domain/run-id.js';
import { eventsPath, slotLogPath, type HallPaths } from '../../ports/hall-paths.js';
import { readRunDocument } from './events-file.js';
import { errorCode } from '../../domain/error-message.js';
import { type ErrorReply, runNotFound } from '../../protocol/replies.js';

export async function appendToLog(file: string, text: string): Promise<void> {
  await fs.promises.appendFile(file, text, { encoding: 'utf8', mode: 0o644 });
}

/**
 * The same, synchronously: a line appended to a local file costs less than
 * the thread-pool round trip of the asynchronous call. A failure is not the
 * run's: the line is lost, the run goes on.
 */
export function appendToLogSync(file: string, text: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.appendFileSync(file, text, { encoding: 'utf8', mode: 0o644 });
      return true;
    } catch (err) {
      // Somebody removed the logs directory: make it again, once.
      if (errorCode(err) !== 'ENOENT' || attempt > 0) return false;
      fs.mkdirSync(path.dirname(file), { recursive: true });
    }
  }
  return false;
}

/** Moves a slot log larger than `maxSize` to `SLOT.log.1` (0 never rotates). */
export function rotateSlotLog(logPath: string, maxSize: number): void {
  if (maxSize <= 0) return;
  const size = fs.statSync(logPath, { throwIfNoEntry: false })?.size ?? 0;
  if (size > maxSize) fs.renameSync(logPath, `${logPath}.1`);
}

async function readText(file: string): Promise<string | null> {
  try {
    return await fs.promises.readFile(file, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return null;
    throw err;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.promises.access(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `logs` command: the run's part of its slot log, for a running run (whose
 * slot is known) or an ended one (whose slot comes from its id).
 */
export async function runLog(paths: HallPaths, id: unknown, liveSlot: string | undefined): Promise<{ log: string } | ErrorReply> {
  if (typeof id !== 'string' || id === '') return { error: 'logs requires an id' };
  if (liveSlot !== undefined) {
    const log = (await readText(slotLogPath(paths, liveSlot))) ?? '';
    return { log: runSection(log, id).text };
  }
  const parsed = parseRunId(id);
  if (!parsed) return runNotFound();
  const log = await readText(slotLogPath(paths, parsed.slot));
  const eventsFile = eventsPath(paths, id);
  const section = log === null ? null : runSection(log, id);
  const known = (section !== null && (section.found || hasResultLine(log ?? '', id))) || (await exists(eventsFile));
  if (!known) return runNotFound();
  const text = section ? section.text : '';
  if (section?.hasResult) return { log: text };
  const document = readRunDocument(eventsFile);
  if (!document) return { log: text };
  const outcome = runOutcome({ runId: id, document, exit: { code: 0, signal: null, signalNumber: null } });
  const sep = text === '' || text.endsWith('\n') ? '' : '\n';
  return { log: `${text}${sep}${resultLine(id, outcome.status, resultText(outcome))}` };
}

const SAID_LINES = 20;

/**
 * The last lines a raider wrote on stderr (its lines of the slot log without
 * the hall's, without their run id): why a raider that ended without a
 * result did, e.g. "no engine configured". Empty when the log has none.
 */
export async function raiderSaid(paths: HallPaths, id: string): Promise<string[]> {
  const log = await runLog(paths, id, undefined);
  return 'log' in log ? saidIn(log.log, id) : [];
}

/** What the raider of run `id` said in its lines of a slot log (the last of them, without the hall's). */
export function saidIn(log: string, id: string): string[] {
  return log
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('[hall] '))
    .map((line) => raiderLineText(line, id) ?? line)
    .slice(-SAID_LINES);
}
