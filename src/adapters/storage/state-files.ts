/**
 * The state files in the formats of reference §6–§7: one `SLOT.queue.json`
 * per numbered slot (a JSON array, kept as `[]` once drained),
 * `binding_queues.json` (binding → array, empty ones left out),
 * `sessions.json` (binding → session id) and the run ledger `runs.json`.
 * All are compact JSON with sorted keys.
 */
import fs from 'node:fs';
import path from 'node:path';
import stringify from 'safe-stable-stringify';
import type { Mission, TelegramTarget } from '../../domain/mission.js';
import { NUMBERED_SLOT } from '../../domain/names.js';
import { KV_NAMESPACE, type DurableState, type LedgerRun } from './durable-state.js';
import { newMissionId } from './mission-id.js';

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

function renderMissions(queue: readonly Mission[]): string {
  const parts: string[] = [];
  for (const mission of queue) {
    let json = missionJson.get(mission);
    if (json === undefined) {
      json = canonical(mission);
      missionJson.set(mission, json);
    }
    parts.push(json);
  }
  return `[${parts.join(',')}]`;
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

export function renderRuns(state: DurableState): string {
  return `${canonical(Object.fromEntries(state.runs))}\n`;
}

/** Reads a JSON file; a missing or unreadable file is `fallback` and the problem is reported. */
function readJson(file: string, fallback: unknown, warn: (msg: string) => void): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') warn(`${file}: cannot read (${(err as Error).message}); ignored`);
    return fallback;
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    warn(`${file}: not valid JSON (${(err as Error).message}); ignored`);
    return fallback;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A queue entry as written by this hall, by the Perl hall (no id), or legacy (a plain string). */
export function missionFromFile(raw: unknown, defaultName: string | undefined): Mission | null {
  if (typeof raw === 'string') return defaultName === undefined ? null : { id: newMissionId(), name: defaultName, mission: raw };
  if (!isRecord(raw)) return null;
  const name = typeof raw.name === 'string' && raw.name !== '' ? raw.name : defaultName;
  if (name === undefined) return null;
  const mission: Mission = {
    id: typeof raw.id === 'string' && raw.id !== '' ? raw.id : newMissionId(),
    name,
    mission: typeof raw.mission === 'string' ? raw.mission : raw.mission === undefined ? '' : String(raw.mission),
  };
  if (typeof raw.binding === 'string' && raw.binding !== '') mission.binding = raw.binding;
  if (isRecord(raw.telegram) && typeof raw.telegram.bot === 'string') mission.telegram = raw.telegram as unknown as TelegramTarget;
  if (typeof raw.permission_mode === 'string') mission.permission_mode = raw.permission_mode;
  if (typeof raw.cwd === 'string') mission.cwd = raw.cwd;
  return mission;
}

/** Loads every state file of `stateDir` into `state`. */
export function loadStateFiles(stateDir: string, state: DurableState, warn: (msg: string) => void): void {
  let names: string[] = [];
  try {
    names = fs.readdirSync(stateDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  for (const name of names.sort()) {
    if (!name.endsWith(QUEUE_SUFFIX)) continue;
    const slot = name.slice(0, -QUEUE_SUFFIX.length);
    if (!NUMBERED_SLOT.test(slot)) continue;
    const raw = readJson(path.join(stateDir, name), [], warn);
    if (!Array.isArray(raw)) {
      warn(`${name}: not a JSON array; ignored`);
      continue;
    }
    for (const item of raw) {
      const mission = missionFromFile(item, slot);
      if (mission) state.load({ kind: 'slot', slot }, mission);
    }
  }
  const bindingQueues = readJson(path.join(stateDir, BINDING_QUEUES_FILE), {}, warn);
  if (isRecord(bindingQueues)) {
    for (const binding of Object.keys(bindingQueues).sort()) {
      const list = bindingQueues[binding];
      if (!Array.isArray(list)) continue;
      for (const item of list) {
        const mission = missionFromFile(item, undefined);
        if (mission) state.load({ kind: 'binding', binding }, { ...mission, binding: mission.binding ?? binding });
      }
    }
  }
  const sessions = readJson(path.join(stateDir, SESSIONS_FILE), {}, warn);
  if (isRecord(sessions)) {
    for (const [binding, id] of Object.entries(sessions)) if (typeof id === 'string') state.sessions.set(binding, id);
  }
  for (const name of names) {
    const ns = name.endsWith('.json') ? name.slice(0, -'.json'.length) : '';
    if (!KV_NAMESPACE.test(ns) || RESERVED.has(name)) continue;
    const values = readJson(path.join(stateDir, name), {}, warn);
    if (isRecord(values)) state.kv.set(ns, new Map(Object.entries(values)));
  }
  const runs = readJson(path.join(stateDir, RUNS_FILE), {}, warn);
  if (isRecord(runs)) {
    for (const [id, run] of Object.entries(runs)) {
      if (isRecord(run) && isRecord(run.entry) && typeof run.slot === 'string') state.runs.set(id, run as unknown as LedgerRun);
    }
  }
}
