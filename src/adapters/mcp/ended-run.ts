/**
 * The outcome of a run that is no longer running, read back from the hall's
 * files: the last `run.finished` of its events file when there is one, else
 * its `[hall] raider ID STATUS: TEXT` line in the slot log (TEXT is cut at
 * 300 characters there).
 */
import fs from 'node:fs';
import { parseRunId } from '../../domain/run-id.js';
import { runOutcome, type RunDocument } from '../../domain/outcome.js';
import { documentIn, readDocumentOrNull } from '../storage/events-file.js';
import { eventsPath, slotLogPath, type HallPaths } from '../../ports/hall-paths.js';
import { definedFields } from '../../domain/defined-fields.js';

export type EndedRun = { found: true; done: Record<string, unknown> } | { found: false; error: string };

export async function endedRun(paths: HallPaths, id: string): Promise<EndedRun> {
  const parsed = parseRunId(id);
  const notFound: EndedRun = { found: false, error: `raider not found: ${id} is not running and the hall has no record of it` };
  if (!parsed) return notFound;

  const eventsFile = eventsPath(paths, id);
  const document = readDocumentOrNull(eventsFile);
  if (document) return { found: true, done: doneOf(id, document, 'events file') };

  const logFile = slotLogPath(paths, parsed.slot);
  for (const file of [logFile, `${logFile}.1`]) {
    const line = lastResultLine(readText(file), id);
    if (!line) continue;
    const field = line.status === 'completed' ? 'response' : 'error';
    return { found: true, done: { ...doneBase(id), status: line.status, [field]: line.text, source: 'slot log' } };
  }
  if (fs.existsSync(eventsFile)) {
    return {
      found: false,
      error: `raider ${id} is not running, and the hall recorded no outcome for it (its events file has no run.finished)`,
    };
  }
  return notFound;
}

/**
 * A run of another hall of a shared cluster, from the cluster's copy of its
 * events (kept for a day after it ran): null when the copy has no result.
 */
export function endedRunInCopy(id: string, events: Buffer): EndedRun | null {
  const document = documentIn(events);
  return document ? { found: true, done: doneOf(id, document, 'cluster') } : null;
}

/** What every answer about an ended run says, whatever it was read from. */
function doneBase(id: string): Record<string, unknown> {
  return { type: 'raider.done', id, slot: parseRunId(id)?.slot ?? id, ended_before_wait: true };
}

function doneOf(id: string, document: RunDocument, source: string): Record<string, unknown> {
  const o = runOutcome({ runId: id, document, exit: { code: 0, signal: null, signalNumber: null } });
  return {
    ...doneBase(id),
    status: o.status,
    ...definedFields({ response: o.response, error: o.error, session: o.session }),
    source,
  };
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function lastResultLine(log: string, id: string): { status: string; text: string } | null {
  if (log === '') return null;
  const re = new RegExp(`^\\[hall\\] raider ${escapeRegExp(id)} ([A-Za-z_]+): (.*)$`, 'gm');
  let last: RegExpExecArray | null = null;
  for (let m = re.exec(log); m !== null; m = re.exec(log)) last = m;
  const status = last?.[1];
  if (status === undefined || status === 'started') return null;
  return { status, text: last?.[2] ?? '' };
}
