/**
 * Where a surface that can ask a person (an ACP session) registers, per
 * binding, to answer raiders' permission questions. The hall's per-run
 * channels implement it; adapters see only this.
 */
import type { PermissionAnswer, PermissionQuestion } from '../domain/permission.js';

export interface QuestionContext {
  runId: string;
  /** Absent for a run of a plain slot (it continues no session). */
  binding?: string;
  /** Aborts when the question is moot: the run ended or its channel closed. */
  signal: AbortSignal;
}

export type PermissionHandler = (question: PermissionQuestion, context: QuestionContext) => Promise<PermissionAnswer>;

export interface PermissionRegistry {
  register(binding: string, handler: PermissionHandler): void;
  unregister(binding: string): void;
  /**
   * Who answers for the runs whose binding nobody registered for (or that
   * have none): the dashboard's questions. Null: such runs get no channel.
   */
  setDefault(handler: PermissionHandler | null): void;
}
