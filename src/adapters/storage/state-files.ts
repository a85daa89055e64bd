/**
 * The state files in their documented formats (docs/storage.md): one `SLOT.queue.json`
 * per numbered slot (a JSON array, kept as `[]` once drained),
 * `binding_queues.json` (binding → array, empty ones left out),
 * `sessions.json` (binding → session id) and the run ledger `runs.json`.
 * All are compact JSON with sorted keys.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { Mission } from '../../domain/mission.js';
import { SAFE_RAIDER_NAME } from '../../domain/names.js';
import { KV_NAMESPACE, type DurableOp, type DurableState, type LedgerRun } from '../../ports/durable-state.js';
import { newMissionId } from './mission-id.js';
import { describeIssues, fileEntrySchema, ledgerRunSchema } from './persisted-schemas.js';
import { errorCode, errorMessage } from '../../domain/error-message.js';
import { isRecord } from '../../domain/records.js';
import { canonicalJson } from '../../protocol/canonical-json.js';
import { definedFields } from '../../domain/defined-fields.js';

export const BINDING_QUEUES_FILE = 'binding_queues.json';
export const SESSIONS_FILE = 'sessions.json';
export const RUNS_FILE = 'runs.json';
export const WAL_FILE = 'wal.jsonl';
const QUEUE_SUFFIX = '.queue.json';
const RESERVED = new Set([BINDING_QUEUES_FILE, SESSIONS_FILE, RUNS_FILE]);

export function slotQueueFile(slot: string): string {
  return `${slot}${QUEUE_SUFFIX}`;
}

export function canonical(value: unknown): string {
  return canonicalJson(value);
}

/**
 * An operation as one line of the write-ahead log (without its newline): what
 * `canonical` writes. A queued mission is built with its keys in sorted order
 * (see `missionOf` and `ownMission`), so it is written by the native JSON writer.
 */
export function walLine(op: DurableOp): string {
  if (op.op !== 'queue') return canonical(op);
  // Sorted keys, as canonical would write them: entry, op, queue.
  return `{"entry":${canonical(op.entry)},"op":"queue","queue":${canonical(op.queue)}}`;
}

/** A queue of missions whose keys are in sorted order is one call of the native JSON writer (tens of ms for 100,000). */
function renderMissions(queue: readonly Mission[]): string {
  return canonical(queue);
}

export function renderSlotQueue(queue: readonly Mission[]): string {
  return `${renderMissions(queue)}\n`;
}

/** Binding → queue with sorted keys, empty queues left out: what `canonical` would write, faster. */
export function renderBindingQueues(state: DurableState): string {
  const bindings = [...state.bindingQueues.keys()].sort();
  const parts: string[] = [];
  for (const binding of bindings) {
    const queue = state.bindingQueues.get(binding) ?? [];
    if (queue.length > 0) parts.push(`${JSON.stringify(binding)}:${renderMissions(queue)}`);
  }
  return `{${parts.join(',')}}\n`;
}

export function renderSessions(state: DurableState): string {
  return `${canonical(Object.fromEntries(state.sessions))}\n`;
}

export function kvFile(ns: string): string {
  return `${ns}.json`;
}

export function renderKv(state: DurableState, ns: string): string {
  return `${canonical(Object.fromEntries(state.kv.get(ns) ?? []))}\n`;
}

/** The run ledger, as `canonical` would write it. */
export function renderRuns(state: DurableState): string {
  const ids = [...state.runs.keys()].sort();
  const parts: string[] = [];
  for (const id of ids) {
    const run = state.runs.get(id);
    if (run) parts.push(`${JSON.stringify(id)}:${renderRun(run)}`);
  }
  return `{${parts.join(',')}}\n`;
}

function renderRun(run: LedgerRun): string {
  return canonical(run);
}

/**
 * Reads a JSON file; a missing one is `fallback`, an unreadable one is
 * reported (with the line of a syntax error) and is `fallback` too.
 */
function readJson(file: string, fallback: unknown, warn: (msg: string) => void): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') warn(`${file}: cannot read (${messageOf(err)}); ignored`);
    return fallback;
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    warn(`${file}:${lineOfError(text, err)}: not valid JSON (${messageOf(err)}); ignored`);
    return fallback;
  }
}

/** The line a JSON syntax error points at (V8 says "position N" or "line L", or nothing when the input ended). */
function lineOfError(text: string, err: unknown): number {
  const message = messageOf(err);
  const line = /line (\d+)/.exec(message);
  if (line) return Number(line[1]);
  const position = /position (\d+)/.exec(message);
  // No position: the input ended too soon, so the error is on its last line.
  const upTo = position ? Number(position[1]) : text.trimEnd().length;
  return text.slice(0, upTo).split('\n').length;
}

function messageOf(err: unknown): string {
  return errorMessage(err);
}

/** Reads `file` as a `schema`; a mismatch is reported and is `fallback`. */
function readJsonAs<T>(file: string, schema: z.ZodType<T>, fallback: T, warn: (msg: string) => void): T {
  const parsed = schema.safeParse(readJson(file, fallback, warn));
  if (parsed.success) return parsed.data;
  warn(`${file}: ${describeIssues(parsed.error)}; ignored`);
  return fallback;
}

const entries = z.array(z.unknown());
const records = z.record(z.string(), z.unknown());

/** The fields of a queue entry in this hall's own format and their place in sorted order; all but id, mission and name may be absent. */
const OWN_FIELDS = new Map(['binding', 'cwd', 'id', 'mission', 'name', 'permission_mode'].map((field, i) => [field, i]));

/**
 * A queue entry exactly as this hall writes it (id, name and mission, and
 * only the optional string fields), checked by hand: the schema's check of
 * each of 100,000 entries was most of a restart's time.
 */
function isOwnMission(raw: unknown): raw is Mission {
  if (!isRecord(raw)) return false;
  const { id, name, mission } = raw;
  if (typeof id !== 'string' || id === '' || typeof name !== 'string' || name === '' || typeof mission !== 'string') return false;
  if (raw.binding === '') return false;
  for (const key in raw) if (!OWN_FIELDS.has(key) || typeof raw[key] !== 'string') return false;
  return true;
}

function keysSorted(mission: Mission): boolean {
  let next = 0;
  for (const key in mission) {
    const at = OWN_FIELDS.get(key) ?? -1;
    if (at < next) return false;
    next = at + 1;
  }
  return true;
}

/**
 * A queue entry in this hall's own format: the parsed object itself when its
 * keys are in sorted order, as this hall writes them (no copy of each of
 * 100,000 entries at a restart, and the native JSON writer can write it), a
 * copy in that order otherwise. Null for anything else, which
 * `missionFromFile` reads through the schema.
 */
function ownMission(raw: unknown): Mission | null {
  if (!isOwnMission(raw)) return null;
  if (keysSorted(raw)) return raw;
  const { binding, cwd, id, mission, name, permission_mode } = raw;
  return {
    ...definedFields({ binding, cwd }),
    id,
    mission,
    name,
    ...definedFields({ permission_mode }),
  };
}

/** A queue entry as written by this hall, by other implementations of the hall (no id), or legacy (a plain string). */
export function missionFromFile(raw: unknown, defaultName: string | undefined): Mission | null {
  const own = ownMission(raw);
  if (own !== null) return own;
  const parsed = fileEntrySchema.safeParse(raw);
  if (!parsed.success) return null;
  const entry = parsed.data;
  if (typeof entry === 'string') return defaultName === undefined ? null : { id: newMissionId(), name: defaultName, mission: entry };
  const name = entry.name !== undefined && entry.name !== '' ? entry.name : defaultName;
  if (name === undefined) return null;
  // Keys in sorted order, as every mission the hall builds (see ownMission).
  return {
    ...(entry.binding !== undefined && entry.binding !== '' ? { binding: entry.binding } : {}),
    ...definedFields({ cwd: entry.cwd }),
    id: entry.id !== undefined && entry.id !== '' ? entry.id : newMissionId(),
    mission: typeof entry.mission === 'string' ? entry.mission : entry.mission === undefined ? '' : String(entry.mission),
    name,
    ...definedFields({ permission_mode: entry.permission_mode, telegram: entry.telegram }),
  };
}

/** Loads the queue entries of `list` (from `file`), reporting those that are not missions; true when one was not in this hall's own format. */
function loadQueue(
  file: string,
  list: readonly unknown[],
  defaultName: string | undefined,
  add: (mission: Mission) => void,
  warn: (msg: string) => void,
): boolean {
  let converted = false;
  list.forEach((item, i) => {
    const own = ownMission(item);
    if (own !== null) {
      add(own);
      return;
    }
    converted = true;
    const mission = missionFromFile(item, defaultName);
    if (mission) add(mission);
    else warn(`${file}: entry ${i + 1} is not a mission; skipped`);
  });
  return converted;
}

/**
 * Loads every state file of `stateDir` into `state`; what does not parse is
 * reported and skipped. Returns true when what was loaded differs from the
 * files (something skipped, an entry of another implementation given an id): they
 * should be written again.
 */
export function loadStateFiles(stateDir: string, state: DurableState, warnUser: (msg: string) => void): boolean {
  let differs = false;
  const warn = (msg: string): void => {
    differs = true;
    warnUser(msg);
  };
  let names: string[] = [];
  try {
    names = fs.readdirSync(stateDir);
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw err;
  }
  for (const name of names.sort()) {
    if (!name.endsWith(QUEUE_SUFFIX)) continue;
    const slot = name.slice(0, -QUEUE_SUFFIX.length);
    // Numbered slots queue when busy; plain slots too when the hall is full (max_running).
    if (!SAFE_RAIDER_NAME.test(slot)) continue;
    const file = path.join(stateDir, name);
    const list = readJsonAs(file, entries, [], warn);
    if (loadQueue(file, list, slot, (mission) => state.load({ kind: 'slot', slot }, mission), warn)) differs = true;
  }
  const bindingFile = path.join(stateDir, BINDING_QUEUES_FILE);
  const bindingQueues = readJsonAs(bindingFile, z.record(z.string(), entries), {}, warn);
  for (const binding of Object.keys(bindingQueues).sort()) {
    const add = (mission: Mission): void => {
      if (mission.binding === undefined) differs = true;
      // `binding` sorts first: the keys stay in sorted order.
      state.load({ kind: 'binding', binding }, mission.binding !== undefined ? mission : { binding, ...mission });
    };
    if (loadQueue(bindingFile, bindingQueues[binding] ?? [], undefined, add, warn)) differs = true;
  }
  const sessionsFile = path.join(stateDir, SESSIONS_FILE);
  for (const [binding, id] of Object.entries(readJsonAs(sessionsFile, records, {}, warn))) {
    if (typeof id === 'string') state.sessions.set(binding, id);
    else warn(`${sessionsFile}: the session of ${binding} is not a string; skipped`);
  }
  for (const name of names) {
    const ns = name.endsWith('.json') ? name.slice(0, -'.json'.length) : '';
    if (!KV_NAMESPACE.test(ns) || RESERVED.has(name)) continue;
    state.kv.set(ns, new Map(Object.entries(readJsonAs(path.join(stateDir, name), records, {}, warn))));
  }
  const runsFile = path.join(stateDir, RUNS_FILE);
  for (const [id, raw] of Object.entries(readJsonAs(runsFile, records, {}, warn))) {
    const run = ledgerRunSchema.safeParse(raw);
    if (run.success) state.runs.set(id, run.data);
    else warn(`${runsFile}: run ${id} is not a run record (${describeIssues(run.error)}); skipped`);
  }
  return differs;
}
