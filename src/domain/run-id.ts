/**
 * Run ids: `SLOT-TIME`, then `SLOT-TIME.2`, `.3`, ... for runs of one slot
 * started in the same second. The last id of each slot is remembered so ids
 * never repeat, even when the clock steps back.
 */
import { SAFE_RAIDER_NAME } from './names.js';

export interface RunIdCursor {
  /** Whole seconds of the last id. */
  sec: number;
  /** Its suffix: 1 for no suffix. */
  n: number;
}

export function formatRunId(slot: string, cursor: RunIdCursor): string {
  return cursor.n === 1 ? `${slot}-${cursor.sec}` : `${slot}-${cursor.sec}.${cursor.n}`;
}

export function nextRunId(slot: string, nowMs: number, last: RunIdCursor | undefined): { id: string; cursor: RunIdCursor } {
  const sec = Math.floor(nowMs / 1000);
  const cursor: RunIdCursor = last === undefined || sec > last.sec ? { sec, n: 1 } : { sec: last.sec, n: last.n + 1 };
  return { id: formatRunId(slot, cursor), cursor };
}

/** Reads `SLOT-TIME[.N]` back; null for anything else. */
export function parseRunId(id: string): { slot: string; cursor: RunIdCursor } | null {
  const m = /^(.+)-(\d+)(?:\.(\d+))?$/.exec(id);
  const slot = m?.[1];
  if (!m || slot === undefined) return null;
  if (slot.includes('/') || slot.startsWith('.')) return null;
  return { slot, cursor: { sec: Number(m[2]), n: m[3] === undefined ? 1 : Number(m[3]) } };
}

/** A run id that may name a file: `SLOT-TIME[.N]` whose slot is a safe raider name. */
export function isSafeRunId(id: string): boolean {
  const parsed = parseRunId(id);
  return parsed !== null && SAFE_RAIDER_NAME.test(parsed.slot);
}

/** Which of two cursors is older: negative, zero or positive, as a sort wants. */
export function compareRunCursors(a: RunIdCursor, b: RunIdCursor): number {
  return a.sec - b.sec || a.n - b.n;
}

/**
 * Orders run ids by when they started: the second, then the suffix (`.10`
 * after `.9`, which text order puts before it); then by text (other slots,
 * ids that are not run ids).
 */
export function compareRunIds(a: string, b: string): number {
  const x = parseRunId(a);
  const y = parseRunId(b);
  const byStart = x && y ? compareRunCursors(x.cursor, y.cursor) : 0;
  return byStart || (a < b ? -1 : a > b ? 1 : 0);
}

export function laterCursor(a: RunIdCursor | undefined, b: RunIdCursor): RunIdCursor {
  if (a === undefined) return b;
  if (b.sec !== a.sec) return b.sec > a.sec ? b : a;
  return b.n > a.n ? b : a;
}
