/**
 * Permission questions of the runs that no ACP client watches, with
 * `dashboard.questions: true`: each is a permission-question machine (the
 * one ACP uses, so the timeout and its `no` are the same), put on the bus as
 * `permission.asked`, answerable from the dashboard and the socket's
 * `answer`. The first answer wins; a later one is told the question was
 * already answered, and by whom. The end is `permission.answered`.
 */
import { createActor, fromPromise } from 'xstate';
import {
  type AnsweredElsewhere,
  isAnsweredElsewhere,
  type PermissionAnswerValue,
  type PermissionQuestion,
} from '../../domain/permission.js';
import { type ClientChoice, permissionQuestionMachine, type QuestionInput } from '../../machines/permission-question.machine.js';
import type { HallServices } from '../../ports/hall-services.js';
import type { FaceAnswer, QuestionContext } from '../../ports/permission-registry.js';
import type { ErrorReply } from '../../protocol/replies.js';

export type AnswerSource = 'dashboard' | 'socket';
type AnsweredBy = AnswerSource | 'acp' | 'timeout' | 'hall';

/** An open question as the dashboard lists it. */
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

export type AnswerResult = { answered: 1; run: string; question: string; answer: PermissionAnswerValue } | ErrorReply;

interface Pending {
  open: OpenQuestion;
  /** Set by the first answer; the machine turns it into the raider's answer. */
  first?: { answer: PermissionAnswerValue; by: AnswerSource };
  choose(choice: ClientChoice): void;
  /** Ends the question with `no` (the run ended, the hall stops, the raider asked again). */
  cancel(reason: string): void;
  /** Set when an ACP client watching the run answered first. */
  elsewhere?: AnsweredElsewhere;
}

/** Answered questions remembered, to tell a late answer who was first. */
const ANSWERED_KEPT = 1000;

const CHOICES: Readonly<Record<PermissionAnswerValue, ClientChoice>> = { once: 'allow_once', session: 'allow_always', no: 'reject_once' };

export function questionKey(run: string, question: string): string {
  return `${run}:${question}`;
}

export class QuestionDesk {
  private readonly pending = new Map<string, Pending>();
  private readonly answered = new Map<string, { answer: PermissionAnswerValue; by: AnsweredBy }>();

  constructor(
    private readonly services: Pick<HallServices, 'publish' | 'log' | 'trackActor' | 'inspect'>,
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  list(): OpenQuestion[] {
    return [...this.pending.values()].map((p) => p.open).sort((a, b) => a.asked_at - b.asked_at);
  }

  /** The permission handler: for runs nobody else answers for, and beside an ACP client's (the first answer wins). */
  readonly ask = (question: PermissionQuestion, context: QuestionContext): Promise<FaceAnswer> => {
    const key = questionKey(context.runId, question.id);
    const askedAt = this.now();
    const open: OpenQuestion = {
      key,
      run: context.runId,
      question: question.id,
      title: question.title,
      tool: question.tool,
      kind: question.kind,
      input: question.input,
      reason: question.reason,
      ...(question.rule !== undefined ? { rule: question.rule } : {}),
      asked_at: askedAt,
      deadline: askedAt + this.timeoutMs,
    };
    let choose: (choice: ClientChoice) => void = () => {};
    const chosen = new Promise<ClientChoice>((resolve) => (choose = resolve));
    const askClient = fromPromise<ClientChoice, QuestionInput>(() => chosen);
    const actor = createActor(permissionQuestionMachine.provide({ actors: { askClient } }), {
      id: `question:${key}`,
      input: {
        questionId: key,
        runId: context.runId,
        ...(question.rule !== undefined ? { rule: question.rule } : {}),
        timeoutMs: this.timeoutMs,
      },
      ...(this.services.inspect ? { inspect: this.services.inspect } : {}),
    });
    const entry: Pending = {
      open,
      choose: (choice) => choose(choice),
      cancel: (reason) => actor.send({ type: 'question.cancel', reason }),
    };
    // A raider asking the same id again while the first is open: the new one replaces it.
    this.pending.get(key)?.cancel('the raider asked the question again');
    this.pending.set(key, entry);
    const untrack = this.services.trackActor(actor);
    return new Promise<FaceAnswer>((resolve) => {
      const onMoot = () => {
        const reason: unknown = context.signal.reason;
        if (isAnsweredElsewhere(reason)) {
          entry.elsewhere = reason;
          entry.cancel(`answered ${reason.answer} ${describeBy(reason.face)}`);
        } else entry.cancel('the run ended or its channel closed before an answer');
      };
      actor.subscribe({
        complete: () => {
          context.signal.removeEventListener('abort', onMoot);
          const snapshot = actor.getSnapshot();
          const machineOutput = snapshot.output ?? { questionId: key, answer: 'no', reason: 'no answer' };
          // Another face's answer is what the raider gets; this machine only stopped asking.
          const output = entry.elsewhere ? { answer: entry.elsewhere.answer, reason: machineOutput.reason } : machineOutput;
          const by: AnsweredBy = entry.elsewhere?.face ?? entry.first?.by ?? (snapshot.value === 'timedOut' ? 'timeout' : 'hall');
          if (this.pending.get(key) === entry) this.pending.delete(key);
          this.remember(key, output.answer, by);
          untrack();
          this.services.publish({
            type: 'permission.answered',
            id: context.runId,
            question: question.id,
            answer: output.answer,
            reason: output.reason,
            by,
          });
          resolve({
            type: 'answer',
            id: question.id,
            answer: output.answer,
            reason: output.reason,
            ...(entry.first ? { face: entry.first.by } : {}),
          });
        },
        error: (err) => {
          this.services.log(`permission question ${key} failed: ${String(err)}`);
          if (this.pending.get(key) === entry) this.pending.delete(key);
          untrack();
          resolve({ type: 'answer', id: question.id, answer: 'no', reason: 'the question failed in the hall' });
        },
      });
      actor.start();
      this.services.publish({
        type: 'permission.asked',
        id: context.runId,
        question: question.id,
        title: open.title,
        tool: open.tool,
        kind: open.kind,
        input: open.input,
        reason: open.reason,
        ...(open.rule !== undefined ? { rule: open.rule } : {}),
        deadline: open.deadline,
      });
      if (context.signal.aborted) onMoot();
      else context.signal.addEventListener('abort', onMoot, { once: true });
    });
  };

  /** An answer from a face: the first one wins; later ones are told who was first. */
  answer(run: string, question: string, answer: PermissionAnswerValue, source: AnswerSource): AnswerResult {
    const key = questionKey(run, question);
    const entry = this.pending.get(key);
    // An ACP client's answer may be on its way to the machine: it was first all the same.
    const elsewhere = entry?.elsewhere !== undefined ? { answer: entry.elsewhere.answer, by: entry.elsewhere.face } : undefined;
    if (entry === undefined || entry.first !== undefined || elsewhere !== undefined) {
      const first = entry?.first ?? elsewhere ?? this.answered.get(key);
      if (first !== undefined)
        return {
          error: `question ${question} of ${run} was already answered (${first.answer}, ${describeBy(first.by)})`,
          code: 'question_answered',
        };
      return {
        error: `no open question ${question} of ${run}: the dashboard and GET /api/questions list the open ones`,
        code: 'question_not_open',
      };
    }
    if (answer === 'session' && entry.open.rule === undefined)
      return { error: `question ${question} of ${run} names no rule to allow for the session: answer once or no` };
    entry.first = { answer, by: source };
    entry.choose(CHOICES[answer]);
    return { answered: 1, run, question, answer };
  }

  /** The hall stops: open questions are answered `no`. */
  closeAll(): void {
    for (const entry of this.pending.values()) entry.cancel('the hall is stopping');
  }

  private remember(key: string, answer: PermissionAnswerValue, by: AnsweredBy): void {
    this.answered.set(key, { answer, by });
    if (this.answered.size > ANSWERED_KEPT) this.answered.delete(this.answered.keys().next().value ?? '');
  }
}

function describeBy(by: AnsweredBy): string {
  if (by === 'timeout') return 'no answer within permission_timeout';
  if (by === 'hall') return 'the run ended first';
  if (by === 'acp') return 'from the ACP client';
  return `from the ${by}`;
}
