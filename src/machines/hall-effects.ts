/**
 * What the hall actor emits to the world. Adapters listen with
 * `hall.on(type, ...)`: the event bus writes `bus` events, the control socket
 * answers `reply` events, the state store applies `store` operations, and the
 * run registry (behind ps, status, attach) follows `registry.*`.
 */
import type { Mission } from '../domain/mission.js';
import type { RunWorktree } from '../domain/worktree.js';
import type { BusEvent, HallBusEvent } from '../protocol/events.js';
import type { HallReply } from '../protocol/replies.js';

/** A public event-bus event before its envelope (version, seq, time, ts): one of the protocol's events. */
export type { BusEvent };

/** A reply to a control command; the socket adapter writes it once its state is on disk. */
export type ReplyBody = HallReply;

export type QueueRef = { kind: 'slot'; slot: string } | { kind: 'binding'; binding: string };

/** A run recorded as started: it left its queue and its outcome is owed. */
export interface LedgerRun {
  id: string;
  slot: string;
  base_name: string;
  entry: Mission;
  binding?: string;
  session?: string;
  pid?: number;
  /** Epoch milliseconds. */
  started_at: number;
  events_path: string;
  log_path: string;
  /** A worktree run's git worktree: the hall that adopts the run settles it when the run ends. */
  worktree?: RunWorktree;
  /** The warm ACP bridge the run was handed to (its RAIDER_HALL_RUN_ID is `spare-` and this), when it was. */
  spare?: string;
}

/** A change to the durable state (queues, ledger, bindings). */
export type StoreOp =
  /** The mission waits at the tail of `queue`; if it waited elsewhere it moves. */
  | { op: 'queue'; queue: QueueRef; entry: Mission }
  /** The mission will not run (dropped or refused). */
  | { op: 'remove'; missionId: string }
  /** The run is about to start: the mission leaves its queue for the ledger, before its raider exists. */
  | { op: 'run'; run: LedgerRun }
  /** An operator moved the waiting mission to the head of the queue it waits in. */
  | { op: 'front'; missionId: string }
  | { op: 'pid'; runId: string; pid: number }
  /** The run's end was reported: it leaves the run ledger. */
  | { op: 'end'; runId: string }
  | { op: 'bind'; binding: string; session: string }
  | { op: 'unbind'; binding: string }
  /** A fact kept in namespace `ns` (the hall's own: the ACP agent session of a hall session). */
  | { op: 'set'; ns: string; key: string; value: unknown }
  | { op: 'unset'; ns: string; key: string };

/** A live run, as `ps`, `status` and `attach` show it. */
export interface LiveRun {
  id: string;
  slot: string;
  base_name: string;
  pid: number;
  mission: string;
  mission_id: string;
  session?: string;
  binding?: string;
  events_path: string;
  log_path: string;
  started_at: number;
}

export type HallEmitted =
  | { type: 'bus'; event: HallBusEvent }
  | { type: 'reply'; reqId: string; body: ReplyBody }
  | { type: 'store'; op: StoreOp }
  | { type: 'registry.runStarted'; run: LiveRun }
  | { type: 'registry.runEnded'; runId: string }
  | { type: 'hall.stopped' };
