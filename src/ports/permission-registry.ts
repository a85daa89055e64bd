/**
 * Where a surface that can ask a person (an ACP session) registers, per
 * binding, to answer raiders' permission questions. The hall's per-run
 * channels implement it; adapters see only this.
 */
import type { DecidedBy, PermissionAnswer, PermissionQuestion } from '../domain/permission.js';

export interface QuestionContext {
  runId: string;
  /** Absent for a run of a plain slot (it continues no session). */
  binding?: string;
  /**
   * Aborts when the question is moot: the run ended or its channel closed,
   * or another face answered first (the reason is then an AnsweredElsewhere).
   */
  signal: AbortSignal;
}

/** A handler's answer with the face that gave it (the dashboard's desk says which of its faces answered). */
export type FaceAnswer = PermissionAnswer & { face?: DecidedBy };

export type PermissionHandler = (question: PermissionQuestion, context: QuestionContext) => Promise<FaceAnswer>;

export interface PermissionRegistry {
  /** Resolves once the binding's runs on any hall of a shared cluster will ask this handler. */
  register(binding: string, handler: PermissionHandler): Promise<void>;
  unregister(binding: string): void;
  /**
   * On a shared cluster: the questions of runs whose binding `covers` takes
   * are also put to whichever other hall answers for `via` (a Telegram bot's
   * questions chat, which only the hall that polls the bot can ask in); the
   * first answer of any wins. Nothing on a hall alone.
   */
  alsoAsk(via: string, covers: (binding: string | undefined) => boolean): void;
  /**
   * Who answers for the runs whose binding nobody registered for (or that
   * have none): the dashboard's questions. It is asked beside a registered
   * handler too, and the first answer wins, for the bindings it `covers`
   * (default: all). Null, or a binding it does not cover: such runs get no channel.
   */
  setDefault(handler: PermissionHandler | null, covers?: (binding: string | undefined) => boolean): void;
}
