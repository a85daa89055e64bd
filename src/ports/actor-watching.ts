/**
 * The live actors as a face follows them (the dashboard's statechart page):
 * implemented by the inspection observer (adapters/inspect/actor-inspection.ts).
 */
import type { ActorWatchMessage } from '../protocol/actor-watch.js';

/** A live actor as a list of them shows it. */
export interface LiveActor {
  id: string;
  parent: string | null;
  /** The machine it runs (`run`, `slot`, ...), or what it is when no machine (`prepareRun`). */
  kind: string;
  state: string;
}

export interface ActorWatching {
  /** Every live actor, parents before children. */
  list(): LiveActor[];
  /**
   * Follows the live actor `id`: `listener` gets its `actor.snapshot` at once,
   * then each `actor.state`, `actor.event` and, at the end, `actor.stopped`.
   * Returns the unsubscribe, or null when no live actor has that id.
   */
  watch(id: string, listener: (message: ActorWatchMessage) => void): (() => void) | null;
}
