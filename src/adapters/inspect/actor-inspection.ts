/**
 * The actor tree on the event bus (`inspect.*` events), for `raider hall
 * inspect`: a snapshot of every live actor when someone subscribes, then each
 * change as it happens (an actor appears, changes state, stops). XState's
 * inspection API stays attached while nobody watches, but then only notes
 * when each actor entered its state (a state text and a time per actor), so
 * a late subscriber sees true ages; the tree is built only for a watcher.
 */
import type { AnyActorRef, InspectionEvent, Subscription } from 'xstate';
import { missionTakenAt, type Mission } from '../../domain/mission.js';
import { MissionQueue } from '../../domain/mission-queue.js';
import { isRecord } from '../../domain/records.js';
import type { EventBus } from '../../ports/bus.js';
import type { ActorWatching, LiveActor } from '../../ports/actor-watching.js';
import type { ActorEventRecord, ActorWatchMessage } from '../../protocol/actor-watch.js';
import { definedFields } from '../../domain/defined-fields.js';

/** Events kept per actor for a page that opens its statechart later. */
export const RECENT_EVENTS = 50;

/** A mission waiting in a slot or binding queue, shown under its queue's actor. */
export interface InspectedMission {
  mission_id: string;
  name: string;
  state: 'queued';
  /** Epoch ms the hall took the mission (absent for an id that does not say). */
  since?: number;
}

export interface InspectedActor {
  id: string;
  parent: string | null;
  /** The machine the actor runs (run, slot, bindingQueue, hall, acpSession, question). */
  kind: string;
  /** The state value as dotted paths (`alive.cancelling`). */
  state: string;
  /** active, done, error or stopped. */
  status: string;
  /** Epoch ms the actor entered its current state (as far as the hall saw). */
  since: number;
  /** Missions waiting in the actor's queue (slots and binding queues). */
  waiting?: number;
  /** Those missions, in the order they will start. */
  missions?: InspectedMission[];
}

function isMission(value: unknown): value is Mission {
  return (
    typeof value === 'object' && value !== null && typeof (value as Mission).id === 'string' && typeof (value as Mission).name === 'string'
  );
}

function waitingMissions(queue: readonly unknown[]): InspectedMission[] {
  return queue.filter(isMission).map((m) => {
    const since = missionTakenAt(m.id);
    return { mission_id: m.id, name: m.name, state: 'queued', ...definedFields({ since }) };
  });
}

/** `{alive: 'cancelling'}` → `alive.cancelling`; parallel regions joined with `, `. */
export function stateText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([key, sub]) => {
        const inner = stateText(sub);
        return inner === '' ? key : `${key}.${inner}`;
      })
      .join(', ');
  }
  return '';
}

/** Every state node a state value is in, parents first: `{alive: 'running'}` → `alive`, `alive.running`. */
export function statePaths(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return [`${prefix}${value}`];
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, sub]) => [
    `${prefix}${key}`,
    ...statePaths(sub, `${prefix}${key}.`),
  ]);
}

type WatchListener = (message: ActorWatchMessage) => void;

interface Watch {
  listeners: Set<WatchListener>;
  id: string;
  /** The state and status last told, so a snapshot that changed neither is not told again. */
  told: string;
}

interface Snap {
  value?: unknown;
  status?: string;
  context?: { queue?: unknown; startedAt?: unknown };
  children?: Record<string, AnyActorRef | undefined>;
  /** A host of actors (a slot's runs, machines/run-host.ts): they count as its parent's children. */
  hosted?: Map<string, AnyActorRef>;
}

/** A queue actor's waiting missions (a slot's or binding's MissionQueue); none for other actors. */
function waitingOf(queue: unknown): readonly unknown[] {
  if (queue instanceof MissionQueue) return queue.toArray();
  return Array.isArray(queue) ? queue : [];
}

function snapOf(actor: AnyActorRef): Snap {
  return actor.getSnapshot() as Snap;
}

/** The children of an actor as the tree shows them: a host is looked through. */
function childrenOf(snap: Snap): AnyActorRef[] {
  const out: AnyActorRef[] = [];
  for (const child of Object.values(snap.children ?? {})) {
    if (!child) continue;
    const hosted = snapOf(child).hosted;
    if (hosted instanceof Map) out.push(...hosted.values());
    else out.push(child);
  }
  return out;
}

/** When an actor entered its state, with the state it was noted for. */
interface Entered {
  state: string;
  status: string;
  since: number;
}

/**
 * When an actor whose entry the hall did not see entered its state (one that
 * was running before it was tracked): a live run since its process started;
 * otherwise the hall knows no better than now.
 */
function firstSince(state: string, snap: Snap, now: number): number {
  const startedAt = snap.context?.startedAt;
  return state.startsWith('alive.') && typeof startedAt === 'number' && startedAt > 0 && startedAt <= now ? startedAt : now;
}

/** The machine an actor runs, by its logic's id (an Actor has its logic; an ActorRef does not say). */
function kindOf(actor: AnyActorRef): string {
  const logic: unknown = 'logic' in actor ? actor.logic : undefined;
  if (!isRecord(logic)) return 'actor';
  if (typeof logic.id === 'string') return logic.id;
  return isRecord(logic.config) && typeof logic.config.id === 'string' ? logic.config.id : 'actor';
}

export class ActorInspection implements ActorWatching {
  /** Each actor's last RECENT_EVENTS events, kept whether anybody watches or not (a few objects a run). */
  private readonly recent = new WeakMap<AnyActorRef, ActorEventRecord[]>();
  private readonly watches = new Map<AnyActorRef, Watch>();
  private readonly roots = new Set<AnyActorRef>();
  private readonly known = new Map<string, InspectedActor>();
  private readonly subscriptions = new Map<AnyActorRef, Subscription>();
  /** The id each actor is shown with, given when it is first seen. */
  private readonly names = new WeakMap<AnyActorRef, string>();
  /** When each actor entered its current state, noted whether anybody watches or not. */
  private readonly entered = new WeakMap<AnyActorRef, Entered>();
  private watching = 0;

  constructor(
    private readonly bus: EventBus,
    private readonly now: () => number = Date.now,
  ) {
    bus.watchSubscribers((subscriber, joined) => {
      if (!subscriber.filter.startsWith('inspect')) return;
      this.watching += joined ? 1 : -1;
      if (joined) this.publishSnapshot();
      else if (this.watching === 0) this.known.clear();
    });
  }

  /** Adds a root actor (the hall; each ACP session); returns a function that removes it. */
  track(root: AnyActorRef): () => void {
    this.roots.add(root);
    this.noteEntry(root, snapOf(root));
    this.attachTo(root);
    if (this.watching > 0) this.discover(root, null);
    return () => {
      this.roots.delete(root);
      this.subscriptions.get(root)?.unsubscribe();
      this.subscriptions.delete(root);
      this.forget(root.id);
    };
  }

  /** Every live actor, parents before children. */
  tree(): InspectedActor[] {
    const out: InspectedActor[] = [];
    const walk = (actor: AnyActorRef, parent: string | null) => {
      const snap = snapOf(actor);
      const node = this.nodeFor(actor, parent, snap);
      out.push(node);
      for (const child of childrenOf(snap)) walk(child, node.id);
    };
    for (const root of this.roots) walk(root, null);
    return out;
  }

  list(): LiveActor[] {
    return this.tree().map(({ id, parent, kind, state }) => ({ id, parent, kind, state }));
  }

  watch(id: string, listener: WatchListener): (() => void) | null {
    const actor = this.find(id);
    if (!actor) return null;
    const snap = snapOf(actor);
    if ((snap.status ?? 'active') !== 'active') {
      // Ended, not yet let go of by its parent: its last state, and nothing more will come.
      listener({ type: 'actor.snapshot', ...this.stateFields(actor, id, snap), events: [...(this.recent.get(actor) ?? [])] });
      listener({ type: 'actor.stopped', id });
      return () => {};
    }
    let watch = this.watches.get(actor);
    if (!watch) {
      watch = { listeners: new Set(), id, told: '' };
      this.watches.set(actor, watch);
    }
    const fields = this.stateFields(actor, id, snapOf(actor));
    watch.told = `${fields.state}\u0000${fields.status}`;
    listener({ type: 'actor.snapshot', ...fields, events: [...(this.recent.get(actor) ?? [])] });
    watch.listeners.add(listener);
    const held = watch;
    return () => {
      held.listeners.delete(listener);
      if (held.listeners.size === 0 && this.watches.get(actor) === held) this.watches.delete(actor);
    };
  }

  /** The live actor shown as `id`, looked for through the tree (names are given on the way). */
  private find(id: string): AnyActorRef | undefined {
    const walk = (actor: AnyActorRef, parent: string | null): AnyActorRef | undefined => {
      const name = this.nameOf(actor, parent);
      if (name === id) return actor;
      for (const child of childrenOf(snapOf(actor))) {
        const found = walk(child, name);
        if (found) return found;
      }
      return undefined;
    };
    for (const root of this.roots) {
      const found = walk(root, null);
      if (found) return found;
    }
    return undefined;
  }

  private stateFields(actor: AnyActorRef, id: string, snap: Snap) {
    const state = stateText(snap.value);
    const status = snap.status ?? 'active';
    const entered = this.entered.get(actor);
    return {
      id,
      kind: kindOf(actor),
      state,
      states: statePaths(snap.value),
      status,
      since: entered?.state === state && entered.status === status ? entered.since : this.now(),
    };
  }

  /** Notes an event on the actor that received it and, when another actor sent it, on that one. */
  private noteEvent(event: InspectionEvent & { type: '@xstate.event' }): void {
    const target = event.actorRef as AnyActorRef;
    const source = event.sourceRef as AnyActorRef | undefined;
    const time = this.now();
    const type = event.event.type;
    const peer = source && source !== target ? source : undefined;
    this.keep(target, { dir: 'received', event: type, ...(peer ? { peer: this.peerName(peer) } : {}), time });
    if (peer) this.keep(peer, { dir: 'sent', event: type, peer: this.peerName(target), time });
  }

  /** An actor as its events name it: its tree id when it has one, else what it runs rather than XState's made-up id. */
  private peerName(actor: AnyActorRef): string {
    const given = this.names.get(actor);
    if (given !== undefined) return given;
    return /^\d+\./.test(actor.id) && typeof actor.src === 'string' ? actor.src : actor.id;
  }

  private keep(actor: AnyActorRef, record: ActorEventRecord): void {
    let list = this.recent.get(actor);
    if (!list) {
      list = [];
      this.recent.set(actor, list);
    }
    list.push(record);
    if (list.length > RECENT_EVENTS) list.shift();
    const watch = this.watches.get(actor);
    if (watch) for (const listener of watch.listeners) listener({ type: 'actor.event', id: watch.id, ...record });
  }

  /** Tells the watchers of an actor of a new state; the end of the actor ends the watch. */
  private tellState(actor: AnyActorRef, watch: Watch, snap: Snap): void {
    const fields = this.stateFields(actor, watch.id, snap);
    const told = `${fields.state}\u0000${fields.status}`;
    if (told === watch.told) return;
    watch.told = told;
    for (const listener of watch.listeners) listener({ type: 'actor.state', ...fields });
    if (fields.status !== 'active') {
      for (const listener of watch.listeners) listener({ type: 'actor.stopped', id: watch.id });
      this.watches.delete(actor);
    }
  }

  private attachTo(root: AnyActorRef): void {
    if (this.subscriptions.has(root)) return;
    this.subscriptions.set(
      root,
      root.system.inspect((event: InspectionEvent) => this.onInspection(event)),
    );
  }

  private publishSnapshot(): void {
    this.known.clear();
    const actors = this.tree();
    for (const a of actors) this.known.set(a.id, a);
    this.bus.publish({ type: 'inspect.snapshot', actors });
  }

  /**
   * An id unique in the tree: the hall's own ids (`hall`, `slot:1bjorn`,
   * `run:ID`) as they are; any other child under its parent's id, named by
   * what it runs when XState made up its id (`0.run.queued`), so every run's
   * `process` is told apart and no internal id shows.
   */
  private nameOf(actor: AnyActorRef, parent: string | null): string {
    const given = this.names.get(actor);
    if (given !== undefined) return given;
    const own = /^\d+\./.test(actor.id) ? (typeof actor.src === 'string' ? actor.src : kindOf(actor)) : actor.id;
    const name = parent === null || own.includes(':') ? own : `${parent}/${own}`;
    this.names.set(actor, name);
    return name;
  }

  private nodeFor(actor: AnyActorRef, parent: string | null, snap: Snap): InspectedActor {
    const id = this.nameOf(actor, parent);
    const previous = this.known.get(id);
    const state = stateText(snap.value);
    const status = snap.status ?? 'active';
    const changed = !previous || previous.state !== state || previous.status !== status;
    const entered = this.entered.get(actor);
    const since =
      entered?.state === state && entered.status === status
        ? entered.since
        : !previous
          ? firstSince(state, snap, this.now())
          : changed
            ? this.now()
            : previous.since;
    const queue = waitingOf(snap.context?.queue);
    return {
      id,
      parent,
      kind: kindOf(actor),
      state,
      status,
      since,
      ...(queue.length > 0 ? { waiting: queue.length, missions: waitingMissions(queue) } : {}),
    };
  }

  private onInspection(event: InspectionEvent): void {
    if (event.type === '@xstate.event') {
      this.noteEvent(event);
      return;
    }
    if (event.type !== '@xstate.snapshot') return;
    const actor = event.actorRef as AnyActorRef;
    const hosted = (event as { snapshot: Snap }).snapshot.hosted;
    if (!(hosted instanceof Map)) this.noteEntry(actor, (event as { snapshot: Snap }).snapshot);
    const watch = this.watches.size > 0 ? this.watches.get(actor) : undefined;
    if (watch) this.tellState(actor, watch, (event as { snapshot: Snap }).snapshot);
    if (this.watching === 0) return;
    if (hosted instanceof Map) {
      // A host took in or let go of a run after its parent's snapshot went out: look again at the parent.
      const parent = actor._parent;
      const known = parent ? this.known.get(this.names.get(parent) ?? parent.id) : undefined;
      if (parent && known) this.update(parent, known.parent, snapOf(parent));
      return;
    }
    const previous = this.known.get(this.names.get(actor) ?? actor.id);
    if (!previous && !this.roots.has(actor)) return; // found through its parent, below
    this.update(actor, previous?.parent ?? null, (event as { snapshot: Snap }).snapshot);
  }

  /** Notes the time an actor's snapshot shows a state other than the one noted before. */
  private noteEntry(actor: AnyActorRef, snap: Snap): void {
    const state = stateText(snap.value);
    const status = snap.status ?? 'active';
    const noted = this.entered.get(actor);
    if (noted?.state !== state || noted.status !== status) this.entered.set(actor, { state, status, since: this.now() });
  }

  private update(actor: AnyActorRef, parent: string | null, snap: Snap): void {
    const node = this.nodeFor(actor, parent, snap);
    const previous = this.known.get(node.id);
    this.known.set(node.id, node);
    if (!previous) this.bus.publish({ type: 'inspect.actor', ...node });
    else if (previous.state !== node.state || previous.status !== node.status || previous.waiting !== node.waiting) {
      this.bus.publish({ type: 'inspect.state', ...node });
    }
    const live = new Set<string>();
    for (const child of childrenOf(snap)) {
      const name = this.nameOf(child, node.id);
      live.add(name);
      if (!this.known.has(name)) this.discover(child, node.id);
    }
    for (const known of [...this.known.values()]) {
      if (known.parent === node.id && !live.has(known.id)) this.forget(known.id);
    }
  }

  private discover(actor: AnyActorRef, parent: string | null): void {
    this.update(actor, parent, snapOf(actor));
  }

  private forget(id: string): void {
    if (!this.known.delete(id)) return;
    for (const known of [...this.known.values()]) if (known.parent === id) this.forget(known.id);
    this.bus.publish({ type: 'inspect.stopped', id });
  }
}
