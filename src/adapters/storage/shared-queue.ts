/**
 * The seam of a shared cluster (several halls on one database): where a
 * hall submits missions for any hall to run, claims the ones it has room
 * for, and takes over the work of a hall whose lease expired. Only the
 * PostgreSQL store offers it, with `cluster_mode: shared`.
 */
import type { Mission } from '../../domain/mission.js';
import type { BusEvent } from '../../machines/hall-effects.js';
import type { LedgerRun } from './durable-state.js';

/** A mission this hall claimed, with the session its binding continues in the cluster. */
export interface ClaimedMission {
  entry: Mission;
  session?: string;
}

/** A run of a lost hall, taken over by this one: it is reported failed, once. */
export interface LostRun {
  run: LedgerRun;
  /** The hall that ran it. */
  hall: string;
}

/** An event of another hall, as the cluster's events table holds it. */
export interface ClusterEvent {
  id: number;
  hall: string;
  event: BusEvent;
}

export interface SharedQueue {
  readonly hallId: string;
  /** Records a mission as waiting for any hall (committed when this resolves); `depth`: its place in its queue. */
  submit(entry: Mission): Promise<{ depth: number }>;
  /** Claims up to `limit` missions that are the heads of their queues and whose slot and binding are free. */
  claim(limit: number): Promise<ClaimedMission[]>;
  /** Takes over the halls whose lease expired: their claimed missions wait again, their runs are returned to report. */
  rescue(): Promise<LostRun[]>;
  /** Which of these runs the cluster still holds as this hall's. */
  stillHeld(runIds: readonly string[]): Promise<Set<string>>;
  /** Writes this hall's events for the other halls to relay. */
  shareEvents(events: readonly BusEvent[]): Promise<void>;
  /** The other halls' events after `afterId` (null: none yet, only the id to start after), oldest first. */
  eventsSince(afterId: number | null): Promise<{ last: number; events: ClusterEvent[] }>;
  /** Drops the events every hall has had time to relay. */
  pruneEvents(): Promise<void>;
  /** Called when another hall may have freed a slot or binding, queued a mission or written events. */
  onDoorbell(listener: () => void): void;
  /** Called when this hall finds it was taken for lost (its lease had expired) and replaced. */
  onReplaced(listener: () => void): void;
}
