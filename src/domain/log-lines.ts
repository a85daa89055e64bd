/** The `[hall]` lines the hall writes into a slot log, and how they are read back. */

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
 * result line (or the end of the log while it runs). `found` is false when the
 * log has no start line for the run.
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
  if (!result) return { text: rest, found: true, hasResult: false };
  const end = result.index + result[0].length;
  const withNewline = rest[end] === '\n' ? end + 1 : end;
  return { text: rest.slice(0, withNewline), found: true, hasResult: true };
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
