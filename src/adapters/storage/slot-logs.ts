/**
 * Slot logs (`SLOT.log`: raider stderr plus `[hall]` lines) and per-run events
 * files (`ID.events.jsonl`), with their retention rules (reference §11).
 */
import fs from 'node:fs';
import path from 'node:path';
import { hasResultLine, resultLine, resultText, runSection } from '../../domain/log-lines.js';
import { runOutcome } from '../../domain/outcome.js';
import { parseRunId, type RunIdCursor } from '../../domain/run-id.js';
import { eventsPath, slotLogPath, type HallPaths } from './hall-paths.js';
import { readRunDocument } from './events-file.js';

export async function appendToLog(file: string, text: string): Promise<void> {
  await fs.promises.appendFile(file, text, { encoding: 'utf8', mode: 0o644 });
}

/** Moves a slot log larger than `maxSize` to `SLOT.log.1` (0 never rotates). */
export async function rotateSlotLog(logPath: string, maxSize: number): Promise<void> {
  if (maxSize <= 0) return;
  try {
    const { size } = await fs.promises.stat(logPath);
    if (size > maxSize) await fs.promises.rename(logPath, `${logPath}.1`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Keeps the newest `keep` events files of a slot (0 keeps all). Files of runs
 * still going are never removed, whatever their age.
 */
export async function pruneEventsFiles(logsDir: string, slot: string, keep: number, live: ReadonlySet<string>): Promise<void> {
  if (keep <= 0) return;
  const suffix = '.events.jsonl';
  const files: Array<{ id: string; cursor: RunIdCursor }> = [];
  for (const name of await fs.promises.readdir(logsDir)) {
    if (!name.endsWith(suffix)) continue;
    const id = name.slice(0, -suffix.length);
    const parsed = parseRunId(id);
    if (!parsed || parsed.slot !== slot) continue;
    files.push({ id, cursor: parsed.cursor });
  }
  files.sort((a, b) => a.cursor.sec - b.cursor.sec || a.cursor.n - b.cursor.n);
  const excess = files.length - keep;
  for (const { id } of files.slice(0, Math.max(0, excess))) {
    if (live.has(id)) continue;
    await fs.promises.rm(path.join(logsDir, `${id}${suffix}`), { force: true });
  }
}

/** The newest run id of each slot among the events files, so a new hall never reuses one. */
export function lastRunIds(logsDir: string): Record<string, RunIdCursor> {
  const cursors: Record<string, RunIdCursor> = {};
  let names: string[] = [];
  try {
    names = fs.readdirSync(logsDir);
  } catch {
    return cursors;
  }
  for (const name of names) {
    if (!name.endsWith('.events.jsonl')) continue;
    const parsed = parseRunId(name.slice(0, -'.events.jsonl'.length));
    if (!parsed) continue;
    const last = cursors[parsed.slot];
    if (!last || parsed.cursor.sec > last.sec || (parsed.cursor.sec === last.sec && parsed.cursor.n > last.n)) {
      cursors[parsed.slot] = parsed.cursor;
    }
  }
  return cursors;
}

async function readText(file: string): Promise<string | null> {
  try {
    return await fs.promises.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
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
export async function runLog(paths: HallPaths, id: unknown, liveSlot: string | undefined): Promise<{ log: string } | { error: string }> {
  if (typeof id !== 'string' || id === '') return { error: 'logs requires an id' };
  if (liveSlot !== undefined) {
    const log = (await readText(slotLogPath(paths, liveSlot))) ?? '';
    return { log: runSection(log, id).text };
  }
  const parsed = parseRunId(id);
  if (!parsed) return { error: 'raider not found' };
  const log = await readText(slotLogPath(paths, parsed.slot));
  const eventsFile = eventsPath(paths, id);
  const section = log === null ? null : runSection(log, id);
  const known = (section !== null && (section.found || hasResultLine(log ?? '', id))) || (await exists(eventsFile));
  if (!known) return { error: 'raider not found' };
  const text = section ? section.text : '';
  if (section?.hasResult) return { log: text };
  const document = await readRunDocument(eventsFile);
  if (!document) return { log: text };
  const outcome = runOutcome({ runId: id, document, exit: { code: 0, signal: null, signalNumber: null } });
  const sep = text === '' || text.endsWith('\n') ? '' : '\n';
  return { log: `${text}${sep}${resultLine(id, outcome.status, resultText(outcome))}` };
}
