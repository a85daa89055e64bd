/**
 * The hall's durable state in memory: slot queues, binding queues, session
 * bindings and the run ledger, and how one operation changes it.
 *
 * Operations are idempotent when replayed over a state that already holds
 * some of their effects (a snapshot newer than part of the log), so recovery
 * can replay the whole write-ahead log over whatever snapshot files it finds.
 */
import type { Mission } from '../domain/mission.js';
import type { LedgerRun, QueueRef, StoreOp } from '../machines/hall-effects.js';

export type { LedgerRun };

/**
 * Small facts adapters keep across restarts, each namespace in a file of its
 * own (`state/NS.json`): the last fired slot of each cron job, the update
 * offset of each Telegram bot.
 */
export type KeyValueOp = { op: 'set'; ns: string; key: string; value: unknown } | { op: 'unset'; ns: string; key: string };

export type DurableOp = StoreOp | KeyValueOp;

/** Namespaces are file names: lower-case words only. */
export const KV_NAMESPACE = /^[a-z][a-z0-9_]{0,31}$/;

/** Which files a change touched, so only those are rewritten. */
export interface DirtyFiles {
  slots: Set<string>;
  kv: Set<string>;
  bindingQueues: boolean;
  sessions: boolean;
  runs: boolean;
}

export function noDirt(): DirtyFiles {
  return { slots: new Set(), kv: new Set(), bindingQueues: false, sessions: false, runs: false };
}

export function isClean(dirty: DirtyFiles): boolean {
  return dirty.slots.size === 0 && dirty.kv.size === 0 && !dirty.bindingQueues && !dirty.sessions && !dirty.runs;
}

export class DurableState {
  readonly slotQueues = new Map<string, Mission[]>();
  readonly bindingQueues = new Map<string, Mission[]>();
  readonly sessions = new Map<string, string>();
  readonly runs = new Map<string, LedgerRun>();
  readonly kv = new Map<string, Map<string, unknown>>();
  /** Where each waiting mission is, so the hot paths need no scan. */
  private readonly where = new Map<string, QueueRef>();

  /** A value an adapter kept (see KeyValueOp). */
  get(ns: string, key: string): unknown {
    return this.kv.get(ns)?.get(key);
  }

  /** Adds a mission read from a snapshot file. */
  load(queue: QueueRef, entry: Mission): void {
    if (this.where.has(entry.id)) return;
    this.queue(queue).push(entry);
    this.where.set(entry.id, queue);
  }

  apply(op: DurableOp, dirty: DirtyFiles): void {
    switch (op.op) {
      case 'queue': {
        const at = this.where.get(op.entry.id);
        if (at && sameQueue(at, op.queue)) return;
        if (at) this.remove(op.entry.id, dirty);
        this.queue(op.queue).push(op.entry);
        this.where.set(op.entry.id, op.queue);
        markQueue(dirty, op.queue);
        return;
      }
      case 'remove':
        this.remove(op.missionId, dirty);
        return;
      case 'front':
        this.toFront(op.missionId, dirty);
        return;
      case 'run':
        this.remove(op.run.entry.id, dirty);
        this.runs.set(op.run.id, op.run);
        dirty.runs = true;
        return;
      case 'pid': {
        const run = this.runs.get(op.runId);
        if (run && run.pid !== op.pid) {
          run.pid = op.pid;
          dirty.runs = true;
        }
        return;
      }
      case 'end':
        if (this.runs.delete(op.runId)) dirty.runs = true;
        return;
      case 'bind':
        if (this.sessions.get(op.binding) !== op.session) {
          this.sessions.set(op.binding, op.session);
          dirty.sessions = true;
        }
        return;
      case 'unbind':
        if (this.sessions.delete(op.binding)) dirty.sessions = true;
        return;
      case 'set': {
        if (!KV_NAMESPACE.test(op.ns)) return;
        let ns = this.kv.get(op.ns);
        if (!ns) {
          ns = new Map();
          this.kv.set(op.ns, ns);
        }
        ns.set(op.key, op.value);
        dirty.kv.add(op.ns);
        return;
      }
      case 'unset':
        if (this.kv.get(op.ns)?.delete(op.key)) dirty.kv.add(op.ns);
        return;
    }
  }

  private queue(ref: QueueRef): Mission[] {
    const map = ref.kind === 'slot' ? this.slotQueues : this.bindingQueues;
    const key = ref.kind === 'slot' ? ref.slot : ref.binding;
    let queue = map.get(key);
    if (!queue) {
      queue = [];
      map.set(key, queue);
    }
    return queue;
  }

  /** Idempotent: a mission already first stays so, one that no longer waits is no change. */
  private toFront(missionId: string, dirty: DirtyFiles): void {
    const at = this.where.get(missionId);
    if (!at) return;
    const queue = this.queue(at);
    const i = queue.findIndex((m) => m.id === missionId);
    if (i <= 0) return;
    const [entry] = queue.splice(i, 1);
    if (entry) queue.unshift(entry);
    markQueue(dirty, at);
  }

  private remove(missionId: string, dirty: DirtyFiles): void {
    const at = this.where.get(missionId);
    if (!at) return;
    this.where.delete(missionId);
    const queue = this.queue(at);
    // Missions leave from the head almost always.
    const i = queue[0]?.id === missionId ? 0 : queue.findIndex((m) => m.id === missionId);
    if (i < 0) return;
    queue.splice(i, 1);
    if (at.kind === 'binding' && queue.length === 0) this.bindingQueues.delete(at.binding);
    markQueue(dirty, at);
  }
}

function sameQueue(a: QueueRef, b: QueueRef): boolean {
  return a.kind === 'slot' ? b.kind === 'slot' && a.slot === b.slot : b.kind === 'binding' && a.binding === b.binding;
}

function markQueue(dirty: DirtyFiles, ref: QueueRef): void {
  if (ref.kind === 'slot') dirty.slots.add(ref.slot);
  else dirty.bindingQueues = true;
}
