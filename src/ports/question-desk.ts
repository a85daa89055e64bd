/**
 * The hall's one desk of permission questions put to people, as the faces
 * see it (docs/telegram.md, docs/dashboard.md): a face opens it for the runs
 * whose binding it covers, hears each question asked and ended, and answers;
 * the first answer of any face wins. The dashboard adapter's QuestionDesk
 * implements it; the composition root makes one per hall.
 */
import type { PermissionAnswerValue } from '../domain/permission.js';
import type { ErrorReply } from '../protocol/replies.js';
import type { PermissionHandler } from './permission-registry.js';

export type AnswerSource = 'dashboard' | 'socket' | 'telegram';
export type AnsweredBy = AnswerSource | 'acp' | 'timeout' | 'hall';

/** The person who pressed a Telegram button. */
export interface TelegramAnswerer {
  bot: string;
  user_id: string;
}

/** An open question as the faces list it. */
export interface OpenQuestion {
  /** `RUN:QUESTION`, the id in the dashboard's routes. */
  key: string;
  run: string;
  question: string;
  title: string;
  tool: string;
  kind: string;
  input: Record<string, unknown>;
  reason: string;
  rule?: string;
  /** Epoch ms. */
  asked_at: number;
  deadline: number;
}

/** What a watcher hears: a question put to the faces, and its end (whoever answered). */
export type QuestionNews =
  | { kind: 'asked'; open: OpenQuestion; binding?: string }
  | { kind: 'ended'; key: string; answer: PermissionAnswerValue; by: AnsweredBy; telegram?: TelegramAnswerer };

/** Which runs a face takes questions of, by the run's binding (none for a plain slot's run). */
export type Covers = (binding: string | undefined) => boolean;

export type AnswerResult = { answered: 1; run: string; question: string; answer: PermissionAnswerValue } | ErrorReply;

export interface QuestionFaces {
  /** A face takes the questions of the runs it covers from now on. */
  openFace(face: string, covers: Covers): void;
  /** A face stops; once none is left, open questions are answered `no`. */
  closeFace(face: string): void;
  /** Hears each question asked and ended; returns the unsubscribe. */
  watch(watcher: (news: QuestionNews) => void): () => void;
  openQuestion(key: string): OpenQuestion | undefined;
  list(): OpenQuestion[];
  /** An answer from a face: the first one wins; later ones are told who was first. */
  answer(run: string, question: string, answer: PermissionAnswerValue, source: AnswerSource, telegram?: TelegramAnswerer): AnswerResult;
  /**
   * Puts a question to the faces and waits for the first answer: the handler a face registers for a
   * binding so that, on a shared cluster, the questions of that binding's runs on other halls come here.
   */
  readonly ask: PermissionHandler;
}
