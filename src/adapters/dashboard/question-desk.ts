/**
 * Permission questions of the runs that no ACP client watches, put to the
 * faces that take them (`dashboard.questions: true`, a Telegram bot's
 * `questions`, docs/telegram.md): one desk for the whole hall, each face
 * saying which runs' bindings it covers. Each question is a permission-question machine (the
 * one ACP uses, so the timeout and its `no` are the same), put on the bus as
 * `permission.asked`, answerable from the dashboard, the socket's `answer`
 * and a Telegram chat's buttons; watchers (the chat) hear when it is asked
 * and when it ended. The first answer wins; a later one is told the question was
 * already answered, and by whom. The end is `permission.answered`.
 */
import { type AnyActorRef, createActor, fromPromise, type InspectionEvent } from 'xstate';
import {
  type AnsweredElsewhere,
  isAnsweredElsewhere,
  type PermissionAnswerValue,
  type PermissionQuestion,
} from '../../domain/permission.js';
import { type ClientChoice, permissionQuestionMachine, type QuestionInput } from '../../machines/permission-question.machine.js';
import type { BusEvent } from '../../machines/hall-effects.js';
import type { FaceAnswer, QuestionContext } from '../../ports/permission-registry.js';
import type { CommandHandlers } from '../../protocol/command-service.js';
import type {
  AnsweredBy,
  AnswerResult,
  AnswerSource,
  Covers,
  OpenQuestion,
  QuestionFaces,
  QuestionNews,
  TelegramAnswerer,
} from '../../ports/question-desk.js';
import { definedFields } from '../../domain/defined-fields.js';

interface Pending {
  open: OpenQuestion;
  /** Set by the first answer; the machine turns it into the raider's answer. */
  first?: { answer: PermissionAnswerValue; by: AnswerSource; telegram?: TelegramAnswerer };
  choose(choice: ClientChoice): void;
  /** Ends the question with `no` (the run ended, the hall stops, the raider asked again). */
  cancel(reason: string): void;
  /** Set when an ACP client watching the run answered first. */
  elsewhere?: AnsweredElsewhere;
}

/** What the desk needs of the hall (the services adapters get, which name the desk themselves). */
export interface DeskServices {
  publish(event: BusEvent): void;
  log(line: string): void;
  /** Shows a question's machine in `raider hall inspect`; returns its untrack. */
  trackActor(root: AnyActorRef): () => void;
  inspect?: (event: InspectionEvent) => void;
}

/** Answered questions remembered, to tell a late answer who was first. */
const ANSWERED_KEPT = 1000;

const CHOICES: Readonly<Record<PermissionAnswerValue, ClientChoice>> = { once: 'allow_once', session: 'allow_always', no: 'reject_once' };

export function questionKey(run: string, question: string): string {
  return `${run}:${question}`;
}

export class QuestionDesk implements QuestionFaces {
  private readonly pending = new Map<string, Pending>();
  private readonly answered = new Map<string, { answer: PermissionAnswerValue; by: AnsweredBy; telegram?: TelegramAnswerer }>();
  private readonly faces = new Map<string, Covers>();
  private readonly watchers = new Set<(news: QuestionNews) => void>();

  constructor(
    private readonly services: DeskServices,
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A face takes the questions of the runs it covers from now on. */
  openFace(face: string, covers: Covers): void {
    this.faces.set(face, covers);
  }

  /** A face stops; once none is left, open questions are answered `no` (the hall stops). */
  closeFace(face: string): void {
    this.faces.delete(face);
    if (this.faces.size === 0) this.closeAll();
  }

  /** Whether some face takes the questions of a run of this binding (else the run gets no channel). */
  readonly covers = (binding: string | undefined): boolean => {
    for (const covers of this.faces.values()) if (covers(binding)) return true;
    return false;
  };

  /** Hears each question asked and ended; returns the unsubscribe. */
  watch(watcher: (news: QuestionNews) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** The open question of this key, if any. */
  openQuestion(key: string): OpenQuestion | undefined {
    return this.pending.get(key)?.open;
  }

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
      ...definedFields({ rule: question.rule }),
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
        ...definedFields({ rule: question.rule }),
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
          const telegram = entry.elsewhere === undefined ? entry.first?.telegram : undefined;
          this.remember(key, { answer: output.answer, by, ...definedFields({ telegram }) });
          untrack();
          this.services.publish({
            type: 'permission.answered',
            id: context.runId,
            question: question.id,
            answer: output.answer,
            reason: output.reason,
            by,
            ...definedFields({ telegram }),
          });
          this.tell({ kind: 'ended', key, answer: output.answer, by, ...definedFields({ telegram }) });
          resolve({
            type: 'answer',
            id: question.id,
            answer: output.answer,
            reason: output.reason,
            // A timeout is said too, so a hall that asked through the cluster records it as one (not as the ACP client's no).
            ...definedFields({ face: entry.first?.by ?? (by === 'timeout' ? by : undefined) }),
          });
        },
        error: (err) => {
          this.services.log(`permission question ${key} failed: ${String(err)}`);
          if (this.pending.get(key) === entry) this.pending.delete(key);
          untrack();
          this.tell({ kind: 'ended', key, answer: 'no', by: 'hall' });
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
        ...definedFields({ rule: open.rule }),
        deadline: open.deadline,
      });
      this.tell({ kind: 'asked', open, ...definedFields({ binding: context.binding }) });
      if (context.signal.aborted) onMoot();
      else context.signal.addEventListener('abort', onMoot, { once: true });
    });
  };

  /** An answer from a face: the first one wins; later ones are told who was first. */
  answer(run: string, question: string, answer: PermissionAnswerValue, source: AnswerSource, telegram?: TelegramAnswerer): AnswerResult {
    const key = questionKey(run, question);
    const entry = this.pending.get(key);
    // An ACP client's answer may be on its way to the machine: it was first all the same.
    const elsewhere = entry?.elsewhere !== undefined ? { answer: entry.elsewhere.answer, by: entry.elsewhere.face } : undefined;
    if (entry === undefined || entry.first !== undefined || elsewhere !== undefined) {
      const first = entry?.first ?? elsewhere ?? this.answered.get(key);
      if (first !== undefined)
        return {
          error: `question ${question} of ${run} was already answered (${first.answer}, ${describeBy(first.by, 'telegram' in first ? first.telegram : undefined)})`,
          code: 'question_answered',
        };
      return {
        error: `no open question ${question} of ${run}: the dashboard and GET /api/questions list the open ones`,
        code: 'question_not_open',
      };
    }
    if (answer === 'session' && entry.open.rule === undefined)
      return { error: `question ${question} of ${run} names no rule to allow for the session: answer once or no` };
    entry.first = { answer, by: source, ...definedFields({ telegram }) };
    entry.choose(CHOICES[answer]);
    return { answered: 1, run, question, answer };
  }

  /** The hall stops: open questions are answered `no`. */
  closeAll(): void {
    for (const entry of this.pending.values()) entry.cancel('the hall is stopping');
  }

  private tell(news: QuestionNews): void {
    for (const watcher of this.watchers) {
      try {
        watcher(news);
      } catch (err) {
        // A face that fails to show a question must not keep the others from it.
        this.services.log(`permission question watcher failed: ${String(err)}`);
      }
    }
  }

  private remember(key: string, answered: { answer: PermissionAnswerValue; by: AnsweredBy; telegram?: TelegramAnswerer }): void {
    this.answered.set(key, answered);
    if (this.answered.size > ANSWERED_KEPT) this.answered.delete(this.answered.keys().next().value ?? '');
  }
}

function describeBy(by: AnsweredBy, telegram?: TelegramAnswerer): string {
  if (by === 'timeout') return 'no answer within permission_timeout';
  if (by === 'hall') return 'the run ended first';
  if (by === 'acp') return 'from the ACP client';
  if (by === 'telegram') return telegram !== undefined ? `from Telegram, user ${telegram.user_id}` : 'from Telegram';
  return `from the ${by}`;
}

/** The socket's `answer`, for every face that opens the desk. */
export function socketAnswer(desk: QuestionFaces): Pick<CommandHandlers, 'answer'> {
  return { answer: (p) => desk.answer(p.run, p.question, p.answer, 'socket') };
}
