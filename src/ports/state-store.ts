/**
 * The storage seam: queues, session bindings and the run ledger behind one
 * small interface. Today it is files under `.raider-hall/state`; a shared
 * backend can replace it when one hall per host is not enough.
 */
import type { DurableOp, DurableState } from './durable-state.js';
import type { SharedQueue } from './cluster-queue.js';

export interface HallStateStore {
  /** The current state, with every applied operation in it. */
  readonly state: DurableState;
  /** Applies an operation now; it reaches the disk with the next commit. */
  apply(op: DurableOp): void;
  /**
   * True when every operation applied so far is in the log (it outlives a
   * crash of the hall process); `commit` makes it outlive a crash of the machine.
   * Whatever a failed write left over is tried again first.
   */
  written(): boolean;
  /**
   * False when a new mission should be refused because it could not be
   * recorded: the log cannot be written, or the disk is full and the store
   * keeps what room it has for what it already accepted.
   */
  accepting(): boolean;
  /**
   * Resolves once every operation applied so far is durable, except facts a
   * restarting hall can find again by itself (a raider's pid, a run's end),
   * which follow shortly. Operations applied in one burst share one write
   * (group commit).
   */
  commit(): Promise<void>;
  /** Makes every operation durable, writes every state file and empties the write-ahead log. */
  checkpoint(): Promise<void>;
  close(): Promise<void>;
  /** The last storage failure, for `status`; null when writes succeed. */
  lastError(): string | null;
  /** Set when several halls serve this store's cluster: missions go through it, not straight to this hall. */
  readonly shared?: SharedQueue;
  /**
   * Why the run's record was refused once its operations committed (a shared cluster had given its
   * mission to another hall); null when it was written. Stores of one hall never refuse.
   */
  refusal?(runId: string): string | null;
}
