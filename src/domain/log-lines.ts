/**
 * The lines of a slot log: the `[hall]` lines the hall writes, the raiders'
 * stderr lines (each prefixed with its run id by the hall, or by its fork
 * server), and how they are read back.
 */

import { parseRunId } from './run-id.js';

/** The result line's text: the answer, or why the run ended (never empty). */
export { outcomeText as resultText } from './outcome.js';

const RESULT_TEXT_MAX = 300;

export function startLine(runId: string): string {
  return `[hall] raider ${runId} started\n`;
}

/** `[hall] raider ID STATUS: TEXT` with whitespace folded and TEXT cut at 300 characters plus `...`. */
export function resultLine(runId: string, status: string, text: unknown): string {
  return `[hall] raider ${runId} ${status}: ${foldResultText(text)}\n`;
}

export function foldResultText(text: unknown): string {
  const raw = text === undefined || text === null ? '' : typeof text === 'string' ? text : JSON.stringify(text);
  // Only a head of the text is folded: a 10 MB response must not cost 10 MB of work.
  // Folding is local, so the head's first 300 characters are the whole text's; a
  // head that folds to 300 or fewer is doubled until it holds more, or all of it.
  for (let head = 4096; ; head *= 2) {
    const whole = head >= raw.length;
    const folded = (whole ? raw : raw.slice(0, head)).replace(/\s+/g, ' ').trim();
    const chars = Array.from(folded);
    if (chars.length > RESULT_TEXT_MAX) return `${chars.slice(0, RESULT_TEXT_MAX).join('')}...`;
    if (whole) return folded;
  }
}

/**
 * What starts each stderr line of a run in its slot log: `[ID] `. Parallel
 * runs of a plain slot share the log; the prefix tells their lines apart.
 */
export function raiderLinePrefix(runId: string): string {
  return `[${runId}] `;
}

/** A stderr line of the run without its prefix; null when the line is not the run's. */
export function raiderLineText(line: string, runId: string): string | null {
  const prefix = raiderLinePrefix(runId);
  return line.startsWith(prefix) ? line.slice(prefix.length) : null;
}

/**
 * True when a line of the run's part of its slot log is the run's own: a
 * `[hall] raider ID ...` line, a note of the hall about the slot's raider
 * entry (`[hall] raider NAME: ...`), a stderr line with its prefix, or a line
 * with no run's prefix at all (written before the hall prefixed them). Lines
 * of other runs of the slot, and the hall's lines about them or about other
 * missions (a refusal), are not.
 */
export function isRunLine(line: string, runId: string): boolean {
  if (line.startsWith('[hall] ')) return line.startsWith(`[hall] raider ${runId} `) || /^\[hall\] raider [^\s:]+: /.test(line);
  if (line.startsWith(raiderLinePrefix(runId))) return true;
  const other = /^\[([^\]\s]+)\] /.exec(line)?.[1];
  return other === undefined || !isSameSlotRunId(other, runId);
}

/** True for a run id of the same slot as `runId` (a line prefix of a parallel run). */
function isSameSlotRunId(candidate: string, runId: string): boolean {
  const slot = parseRunId(runId)?.slot;
  return slot !== undefined && parseRunId(candidate)?.slot === slot;
}

/** Only the run's own lines of a text (see isRunLine); a last line without its newline stays so. */
export function runLinesOnly(text: string, runId: string): string {
  return text
    .split(/(?<=\n)/)
    .filter((line) => isRunLine(line, runId))
    .join('');
}

export function refusedLine(name: string, error: string): string {
  return `[hall] raider ${name} refused: ${foldResultText(error)}; mission not run\n`;
}

export function ignoredKeysLine(baseName: string, keys: readonly string[]): string {
  return `[hall] raider ${baseName}: ${keys.join(', ')} in .raider-hall.yml ignored\n`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The part of a slot log that belongs to one run: from its start line to its
 * result line (or the end of the log while it runs), without the lines of
 * other runs in between (parallel runs of a plain slot share the log).
 * `found` is false when the log has no start line for the run: `text` is
 * then the whole log.
 */
export function runSection(log: string, runId: string): { text: string; found: boolean; hasResult: boolean } {
  const id = escapeRegExp(runId);
  const start = new RegExp(`^\\[hall\\] raider ${id} started$`, 'm').exec(log);
  const resultRe = new RegExp(`^\\[hall\\] raider ${id} [A-Za-z_]+: .*$`, 'm');
  if (!start) {
    return { text: log, found: false, hasResult: resultRe.test(log) };
  }
  const rest = log.slice(start.index);
  const result = resultRe.exec(rest);
  if (!result) return { text: runLinesOnly(rest, runId), found: true, hasResult: false };
  const end = result.index + result[0].length;
  const withNewline = rest[end] === '\n' ? end + 1 : end;
  return { text: runLinesOnly(rest.slice(0, withNewline), runId), found: true, hasResult: true };
}

/** True when the log holds a result line for the run. */
export function hasResultLine(log: string, runId: string): boolean {
  return resultOf(log, runId) !== null;
}

/** The status and text of the run's result line in a slot log, or null when it has none. */
export function resultOf(log: string, runId: string): { status: string; text: string } | null {
  const m = new RegExp(`^\\[hall\\] raider ${escapeRegExp(runId)} ([A-Za-z_]+): (.*)$`, 'm').exec(log);
  return m ? { status: m[1] ?? '', text: m[2] ?? '' } : null;
}
