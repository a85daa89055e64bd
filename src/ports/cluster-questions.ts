/**
 * The seam of permission questions across the halls of a shared cluster
 * (docs/cluster.md, "ACP across halls"): the hall that runs a raider asks, a
 * hall that answers for the run's binding (an ACP session is open there)
 * puts the question to its person and writes the answer; the first answer
 * written stands. Only the PostgreSQL store offers it, with `cluster_mode: shared`.
 */
import type { DecidedBy, PermissionAnswerValue, PermissionQuestion } from '../domain/permission.js';

/** A question asked in the cluster. */
export interface ClusterQuestion {
  id: string;
  runId: string;
  binding: string;
  /** The hall that runs the raider and asked. */
  hall: string;
  question: PermissionQuestion;
}

/** An answer as the cluster keeps it: who gave it, when a face did. */
export interface ClusterAnswer {
  answer: PermissionAnswerValue;
  reason: string;
  face?: DecidedBy;
}

/** What a look at the cluster finds. */
export interface QuestionsSeen {
  /** Open questions of the bindings asked about. */
  open: ClusterQuestion[];
  /** The watched questions that are answered (or gone: null), by id. */
  settled: Map<string, ClusterAnswer | null>;
  /** The watched questions still open whose binding no live hall answers for any more. */
  orphaned: Set<string>;
}

export interface ClusterQuestions {
  /** This hall answers for `binding` from now on (it takes the binding over from any other hall). */
  serve(binding: string): Promise<void>;
  /** This hall no longer answers for `binding` (another hall that took it over still does). */
  unserve(binding: string): Promise<void>;
  /** True when a live hall other than this one answers for `binding`. */
  servedElsewhere(binding: string): Promise<boolean>;
  /** Puts a question of this hall's run to the cluster (committed when this resolves). */
  ask(question: Omit<ClusterQuestion, 'hall'>): Promise<void>;
  /** Writes the answer unless one was written first; true when this one stands. */
  answer(id: string, answer: ClusterAnswer): Promise<boolean>;
  /** The open questions of `bindings` (asked by other halls) and what became of the `watched` ones. */
  look(bindings: readonly string[], watched: readonly string[]): Promise<QuestionsSeen>;
}
