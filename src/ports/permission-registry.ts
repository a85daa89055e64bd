/**
 * Where a surface that can ask a person (an ACP session) registers, per
 * binding, to answer raiders' permission questions. The hall's per-run
 * channels implement it; adapters see only this.
 */
import type { PermissionAnswer, PermissionQuestion } from '../domain/permission.js';

export interface QuestionContext {
  runId: string;
  binding: string;
  /** Aborts when the question is moot: the run ended or its channel closed. */
  signal: AbortSignal;
}

export type PermissionHandler = (question: PermissionQuestion, context: QuestionContext) => Promise<PermissionAnswer>;

export interface PermissionRegistry {
  register(binding: string, handler: PermissionHandler): void;
  unregister(binding: string): void;
}
