/**
 * The state files in their documented formats (docs/storage.md): one `SLOT.queue.json`
 * per numbered slot (a JSON array, kept as `[]` once drained),
 * `binding_queues.json` (binding → array, empty ones left out),
 * `sessions.json` (binding → session id) and the run ledger `runs.json`.
 * All are compact JSON with sorted keys.
 */
import fs from 'node:fs';
import path from 'node:path';
import stringify from 'safe-stable-stringify';
import { z } from 'zod';
import type { Mission } from '../../domain/mission.js';
import { SAFE_RAIDER_NAME } from '../../domain/names.js';
import { KV_NAMESPACE, type DurableOp, type DurableState, type LedgerRun } from './durable-state.js';
import { newMissionId } from './mission-id.js';
import { describeIssues, fileEntrySchema, ledgerRunSchema } from './persisted-schemas.js';
import { errorCode } from './write-ahead-log.js';
import { errorMessage } from '../../domain/error-message.js';

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
  return stringify(value) ?? 'null';
}

/**
 * Each waiting mission's JSON, made once: a checkpoint of a long queue then
 * costs a join, not the canonical rendering of every entry again. Missions
 * are not changed once queued.
 */
const missionJson = new WeakMap<Mission, string>();

function jsonOfMission(mission: Mission): string {
  let json = missionJson.get(mission);
  if (json === undefined) {
    json = renderMission(mission);
    missionJson.set(mission, json);
  }
  return json;
}

/**
 * What `canonical` writes for a mission, faster: a mission of string fields
 * only is built with its keys in sorted order and given to JSON.stringify
 * (several times faster on a queue of 100,000). Anything else (a Telegram
 * target, a key no mission has) goes through `canonical`.
 */
function renderMission(mission: Mission): string {
  const sorted: Record<string, string> = {};
  let keys = 3;
  if (mission.binding !== undefined) {
    sorted.binding = mission.binding;
    keys++;
  }
  if (mission.cwd !== undefined) {
    sorted.cwd = mission.cwd;
    keys++;
  }
  sorted.id = mission.id;
  sorted.mission = mission.mission;
  sorted.name = mission.name;
  if (mission.permission_mode !== undefined) {
    sorted.permission_mode = mission.permission_mode;
    keys++;
  }
  const plain = Object.keys(mission).length === keys && Object.values(sorted).every((v) => typeof v === 'string');
  return plain ? JSON.stringify(sorted) : canonical(mission);
}

/**
 * An operation as one line of the write-ahead log (without its newline): what
 * `canonical` writes. A queued mission's JSON is made here once and kept for
 * the checkpoints of its queue file.
 */
export function walLine(op: DurableOp): string {
  if (op.op !== 'queue') return canonical(op);
  // Sorted keys, as canonical would write them: entry, op, queue.
  return `{"entry":${jsonOfMission(op.entry)},"op":"queue","queue":${canonical(op.queue)}}`;
}

function renderMissions(queue: readonly Mission[]): string {
  return `[${queue.map(jsonOfMission).join(',')}]`;
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

/** The run ledger, as `canonical` would write it; each run's mission from the cache (a run's pid changes, its mission does not). */
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
  const fields = Object.entries(run)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${JSON.stringify(key)}:${key === 'entry' ? jsonOfMission(run.entry) : canonical(value)}`);
  return `{${fields.join(',')}}`;
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

/**
 * A queue entry exactly as this hall writes it (id, name and mission, and
 * only the optional string fields), checked by hand: the schema's check of
 * each of 100,000 entries was most of a restart's time. Null for anything
 * else, which `missionFromFile` reads through the schema.
 */
function ownMission(raw: unknown): Mission | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const fields: Record<string, unknown> = { ...raw };
  const { id, name, mission } = fields;
  if (typeof id !== 'string' || id === '' || typeof name !== 'string' || name === '' || typeof mission !== 'string') return null;
  const out: Mission = { id, name, mission };
  let keys = 3;
  for (const key of ['binding', 'permission_mode', 'cwd'] as const) {
    const value = fields[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' || (key === 'binding' && value === '')) return null;
    out[key] = value;
    keys++;
  }
  return Object.keys(fields).length === keys ? out : null;
}

/** A queue entry as written by this hall, by the Perl hall (no id), or legacy (a plain string). */
export function missionFromFile(raw: unknown, defaultName: string | undefined): Mission | null {
  const own = ownMission(raw);
  if (own !== null) return own;
  const parsed = fileEntrySchema.safeParse(raw);
  if (!parsed.success) return null;
  const entry = parsed.data;
  if (typeof entry === 'string') return defaultName === undefined ? null : { id: newMissionId(), name: defaultName, mission: entry };
  const name = entry.name !== undefined && entry.name !== '' ? entry.name : defaultName;
  if (name === undefined) return null;
  const mission: Mission = {
    id: entry.id !== undefined && entry.id !== '' ? entry.id : newMissionId(),
    name,
    mission: typeof entry.mission === 'string' ? entry.mission : entry.mission === undefined ? '' : String(entry.mission),
  };
  if (entry.binding !== undefined && entry.binding !== '') mission.binding = entry.binding;
  if (entry.telegram !== undefined) mission.telegram = entry.telegram;
  if (entry.permission_mode !== undefined) mission.permission_mode = entry.permission_mode;
  if (entry.cwd !== undefined) mission.cwd = entry.cwd;
  return mission;
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
 * files (something skipped, an entry of the Perl hall given an id): they
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
      state.load({ kind: 'binding', binding }, { ...mission, binding: mission.binding ?? binding });
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
