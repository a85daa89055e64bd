/**
 * The seam of a shared cluster (several halls on one database): where a
 * hall submits missions for any hall to run, claims the ones it has room
 * for, and takes over the work of a hall whose lease expired. Only the
 * PostgreSQL store offers it, with `cluster_mode: shared`.
 */
import type { Mission } from '../domain/mission.js';
import type { AgentSessionRecord } from '../protocol/agent-session.js';
import type { BusEvent } from '../machines/hall-effects.js';
import type { ClusterFaces } from './cluster-faces.js';
import type { ClusterQuestions } from './cluster-questions.js';
import type { LedgerRun } from './durable-state.js';

/** A mission this hall claimed, with the session its binding continues in the cluster. */
export interface ClaimedMission {
  entry: Mission;
  session?: string;
  /** The ACP agent session the cluster recorded for `session` (state namespace `acp_agent`), whichever hall ran it. */
  agentSession?: AgentSessionRecord;
  /** The run id reserved for it, unique in the cluster (`SLOT-TIME[.N]`). */
  runId: string;
  /** The time the id was made from (epoch ms). */
  at: number;
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

/** A run on another hall of the cluster, as `ps` lists it. */
export interface RemoteRun {
  hall: string;
  run: LedgerRun;
}

/** A hall of the cluster as its row says: what the dashboard shows of each. */
export interface ClusterHall {
  id: string;
  host: string;
  root: string;
  pid: number;
  /** When it joined the cluster (epoch ms). */
  started_at: number;
  /** Seconds since it last renewed its lease, by the database's clock. */
  lease_age: number;
  /**
   * Seconds until its lease expires, by the database's clock; below 0 it has
   * expired and the hall waits to be taken over.
   */
  lease_left: number;
  /** Its runs in the cluster's run ledger (started, or about to start). */
  running: number;
}

/** A mission in the cluster's queue, waiting or claimed by a hall that is starting it. */
export interface QueuedMission {
  queue: { kind: 'slot'; slot: string } | { kind: 'binding'; binding: string };
  entry: Mission;
  /** The hall that claimed it; null while it waits for any hall. */
  hall: string | null;
}

/** What became of a cancel or kill sent for a run or mission this hall does not hold. */
export type RemoteSignal = { kind: 'run'; hall: string } | { kind: 'dropped'; entry: Mission } | { kind: 'unknown' };

/** A binding's session journal, which the binding's next run may need on another hall. */
export interface SessionJournals {
  /** Brings this hall's copy of the session's journal up to the cluster's, before a run of the session starts here. */
  pull(session: string): Promise<void>;
  /**
   * A journal made on this hall before any run of it (an ACP session's): it goes to the cluster as the
   * session's first piece when the cluster has none, so the session's first run may start on any hall.
   */
  seed(session: string): Promise<void>;
}

/** Which file of a run a piece of output comes from: its events file, or its lines of the slot log. */
export type OutputStream = 'events' | 'log';

/** A piece of a run's output: the bytes of `stream` from byte `start`. */
export interface OutputPiece {
  runId: string;
  stream: OutputStream;
  start: number;
  data: Buffer;
}

/** What runs write on their hall's host, for `attach` and `logs` on the other halls. */
export interface RunOutputs {
  /** Writes pieces of this hall's runs' output. */
  ship(pieces: readonly OutputPiece[]): Promise<void>;
  /** The run's `stream` from byte `from` on, as far as it is contiguous; null when the cluster has none of the run's output. */
  read(runId: string, stream: OutputStream, from: number): Promise<Buffer | null>;
  /** The hall that shipped the run's output; null when the cluster has none of it. */
  shippedBy(runId: string): Promise<string | null>;
}

export interface SharedQueue {
  readonly hallId: string;
  /** What the cron and Telegram faces ask the cluster (one fire per occurrence, one poller per bot). */
  readonly faces: ClusterFaces;
  readonly journals: SessionJournals;
  readonly outputs: RunOutputs;
  /** Permission questions of runs whose binding another hall answers for (an ACP session open there). */
  readonly questions: ClusterQuestions;
  /** Records a mission as waiting for any hall (committed when this resolves); `depth`: its place in its queue. */
  submit(entry: Mission): Promise<{ depth: number }>;
  /** The session the cluster has bound to `binding` (any hall may have bound it), or null. */
  sessionOf(binding: string): Promise<string | null>;
  /** Claims up to `limit` missions that are the heads of their queues and whose slot and binding are free. */
  claim(limit: number): Promise<ClaimedMission[]>;
  /**
   * Takes over the halls whose lease expired: their claimed missions wait
   * again, and each of their runs is reported as `report` says, in the
   * cluster's events, in the takeover's own transaction (so exactly once).
   */
  rescue(report: (lost: LostRun) => BusEvent): Promise<LostRun[]>;
  /** Which of these runs the cluster still holds as this hall's. */
  stillHeld(runIds: readonly string[]): Promise<Set<string>>;
  /** Writes this hall's events for the other halls to relay. */
  shareEvents(events: readonly BusEvent[]): Promise<void>;
  /** The other halls' events after `afterId` (null: none yet, only the id to start after), oldest first. */
  eventsSince(afterId: number | null): Promise<{ last: number; events: ClusterEvent[] }>;
  /** Drops the events every hall has had time to relay. */
  pruneEvents(): Promise<void>;
  /** Every hall of the cluster, this one included, by id. */
  halls(): Promise<ClusterHall[]>;
  /** Every mission in the cluster's queue (waiting or claimed), each queue in the order its missions start. */
  queued(): Promise<QueuedMission[]>;
  /** The runs with a raider on the other halls. */
  remoteRuns(): Promise<RemoteRun[]>;
  /** The run `id` on another hall, while it has a raider there. */
  remoteRun(id: string): Promise<RemoteRun | null>;
  /** Sends a cancel or kill to the hall that runs `id`, or drops the waiting mission `id` (a cancel). */
  signal(id: string, signal: 'cancel' | 'kill'): Promise<RemoteSignal>;
  /**
   * Moves the mission `id` waiting in the cluster's queue to the front of its
   * queue; `binding`: the binding queue it waits in, if it waits for its
   * binding; `from`: its place before (1: no change). Null when it does not wait there.
   */
  front(id: string): Promise<{ entry: Mission; binding?: string; from: number } | null>;
  /** Takes the cancels and kills other halls sent for this hall's runs. */
  takeSignals(): Promise<Array<{ runId: string; signal: 'cancel' | 'kill' }>>;
  /** Called when another hall may have freed a slot or binding, queued a mission or written events. */
  onDoorbell(listener: () => void): void;
  /** Called when this hall finds it was taken for lost (its lease had expired) and replaced. */
  onReplaced(listener: () => void): void;
  /**
   * Called with the runs whose record the cluster refused: their missions' claims had gone back to the
   * cluster (this hall was taken for lost meanwhile) and may run elsewhere. They must not start here.
   */
  onRunsRefused(listener: (runIds: readonly string[]) => void): void;
}
