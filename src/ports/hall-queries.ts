/**
 * The read-only control commands (`ps`, `status`, `queue`, `sessions`,
 * `attach`, `logs`) as the hall's faces ask them, answered without the hall
 * actor. adapters/control/queries.ts implements it.
 */
import type { Answer, ErrorReply, ReplyTo } from '../protocol/replies.js';
import type { HallStateStore } from './state-store.js';

/** Where an id that names no live run of this hall is. */
export type Whereabouts =
  | { kind: 'ended'; status: string; at?: number }
  | { kind: 'waiting'; waiting: NonNullable<Answer<'status'>['waiting']>[number] }
  | { kind: 'dropped'; reason: string; at: number }
  | { kind: 'unknown' };

/** The commands a refusal may answer: each says what it could not do. */
export type RefusedVerb = 'cancel' | 'kill' | 'attach' | 'logs' | 'show' | 'wait for';

/** Adds sections to `status` (cron, telegram, acp), each under its own key. */
export type StatusSection = () => Record<string, unknown>;

export interface HallQueries {
  addStatusSection(section: StatusSection): void;
  ps(): ReplyTo<'ps'>;
  status(): Answer<'status'>;
  /** The waiting missions as the durable state holds them. */
  waitingState(): Pick<HallStateStore['state'], 'slotQueues' | 'bindingQueues'>;
  queue(only?: string): ReplyTo<'queue'>;
  sessions(): ReplyTo<'sessions'>;
  attach(id: string): ReplyTo<'attach'>;
  logs(id: string): Promise<ReplyTo<'logs'>>;
  /** Where an id that names no live run of this hall is: ended, waiting, dropped or unknown. */
  whereabouts(id: string): Promise<Whereabouts>;
  /** The refusal of `verb` for an id that names no live run of this hall, saying what is true of it. */
  refusal(id: string, verb: RefusedVerb): Promise<ErrorReply>;
}
