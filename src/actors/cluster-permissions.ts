/**
 * Permission questions across the halls of a shared cluster (docs/cluster.md,
 * "ACP across halls"). Two sides, one per hall:
 *
 * - asking: a run here whose binding another hall answers for (its ACP
 *   session is open there) has its questions written to the cluster and waits
 *   for the first answer written; when the run ends or another face here
 *   answers first, it writes that, so the answering hall withdraws.
 * - answering: this hall answers for the bindings registered here; it looks
 *   for the other halls' open questions of those bindings and puts each to the
 *   binding's handler here (the ACP session), then writes the answer.
 *
 * Each side looks when the cluster's doorbell rings and every half second
 * while it has something to look for (a notification can be lost).
 */
import { randomUUID } from 'node:crypto';
import type { ClusterAnswer, ClusterQuestions } from '../ports/cluster-questions.js';
import { SerialQueue } from '../adapters/storage/serial-queue.js';
import { errorMessage } from '../domain/error-message.js';
import { decidedByText, isAnsweredElsewhere, refusal, type PermissionQuestion } from '../domain/permission.js';
import type { FaceAnswer, PermissionHandler, QuestionContext } from '../ports/permission-registry.js';

const LOOK_MS = 500;
/** The asking hall's own limit past permission_timeout: the answering hall's timeout normally decides first. */
const ASKER_GRACE_MS = 5_000;

interface Waiting {
  questionId: string;
  resolve: (answer: FaceAnswer) => void;
}

export class ClusterPermissions {
  /** Questions of this hall's runs, waiting for an answer from the cluster. */
  private readonly waiting = new Map<string, Waiting>();
  /** Other halls' questions this hall is putting to a handler here, by id. */
  private readonly asking = new Map<string, AbortController>();
  /**
   * Other halls' questions answered here whose answer is being written or not yet seen written: watched
   * (never taken for open again) until a look finds them settled, so a look in between asks no one twice.
   */
  private readonly answeredHere = new Set<string>();
  private readonly served = new Set<string>();
  private localHandler: (binding: string) => PermissionHandler | undefined = () => undefined;
  private timer: NodeJS.Timeout | null = null;
  private readonly looks = new SerialQueue();
  private writes: Promise<void> = Promise.resolve();
  private lastProblem: string | null = null;

  constructor(
    private readonly questions: ClusterQuestions,
    onDoorbell: (listener: () => void) => void,
    private readonly timeoutMs: number,
    private readonly log: (line: string) => void,
  ) {
    onDoorbell(() => this.look());
  }

  /** Where the answering side finds the handler registered here for a binding. */
  answerWith(localHandler: (binding: string) => PermissionHandler | undefined): void {
    this.localHandler = localHandler;
  }

  /** A handler registered here for `binding`: this hall answers for it in the cluster. */
  serve(binding: string): Promise<void> {
    this.served.add(binding);
    this.keepLooking();
    return this.write(() => this.questions.serve(binding), `tell the cluster that this hall answers for ${binding}`);
  }

  unserve(binding: string): Promise<void> {
    this.served.delete(binding);
    return this.write(() => this.questions.unserve(binding), `tell the cluster that this hall no longer answers for ${binding}`);
  }

  /** Writes of who answers, in the order asked for: a session closed and opened again ends served. */
  private write(work: () => Promise<void>, what: string): Promise<void> {
    const next = this.writes.then(work).catch((err: unknown) => this.problem(`cannot ${what}: ${errorMessage(err)}`));
    this.writes = next;
    return next;
  }

  /** True when another hall answers for the binding (false when the cluster cannot say). */
  async servedElsewhere(binding: string): Promise<boolean> {
    try {
      return await this.questions.servedElsewhere(binding);
    } catch (err) {
      this.problem(`cannot ask the cluster who answers for ${binding}: ${errorMessage(err)}`);
      return false;
    }
  }

  /** The asking side: a handler for a run here whose binding another hall answers for. */
  readonly ask: PermissionHandler = async (question: PermissionQuestion, context: QuestionContext): Promise<FaceAnswer> => {
    const { binding, runId, signal } = context;
    if (binding === undefined) return refusal(question.id, 'nobody can answer for this run');
    const id = randomUUID();
    await this.questions.ask({ id, runId, binding, question });
    return new Promise<FaceAnswer>((resolve) => {
      const settle = (answer: FaceAnswer) => {
        if (!this.waiting.delete(id)) return;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      };
      // Whatever ends the question here is written, so the answering hall stops asking; the first answer written stands.
      const withdraw = (answer: ClusterAnswer) => {
        void this.questions.answer(id, answer).catch(() => undefined);
        settle({ type: 'answer', id: question.id, answer: answer.answer, reason: answer.reason });
      };
      const onAbort = () => {
        const reason: unknown = signal.reason;
        withdraw(
          isAnsweredElsewhere(reason)
            ? { answer: reason.answer, reason: `answered ${decidedByText(reason.face)}`, face: reason.face }
            : { answer: 'no', reason: 'the run ended or its channel closed before an answer' },
        );
      };
      const timer = setTimeout(
        () =>
          withdraw({
            answer: 'no',
            reason: `no answer from the cluster within ${this.timeoutMs / 1000} s (permission_timeout)`,
            face: 'timeout',
          }),
        this.timeoutMs + ASKER_GRACE_MS,
      );
      timer.unref();
      this.waiting.set(id, { questionId: question.id, resolve: settle });
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      this.keepLooking();
      this.look();
    });
  };

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const controller of this.asking.values()) controller.abort();
    this.asking.clear();
  }

  private keepLooking(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.idle()) {
        if (this.timer) clearInterval(this.timer);
        this.timer = null;
        return;
      }
      this.look();
    }, LOOK_MS);
    this.timer.unref();
  }

  /** Nothing to look for: no binding answered here, no question of ours waiting, none being asked here. */
  private idle(): boolean {
    return this.served.size === 0 && this.waiting.size === 0 && this.asking.size === 0 && this.answeredHere.size === 0;
  }

  /** One look at a time; a wake during one asks for one more. */
  private look(): void {
    if (this.idle()) return;
    void this.looks.once('look', () => this.lookOnce());
  }

  private async lookOnce(): Promise<void> {
    const watched = [...this.waiting.keys(), ...this.asking.keys(), ...this.answeredHere];
    let seen: Awaited<ReturnType<ClusterQuestions['look']>>;
    try {
      seen = await this.questions.look([...this.served], watched);
      this.lastProblem = null;
    } catch (err) {
      this.problem(`cannot look at the cluster's permission questions: ${errorMessage(err)}`);
      return;
    }
    for (const [id, answer] of seen.settled) {
      this.answeredHere.delete(id);
      const waiting = this.waiting.get(id);
      if (waiting) {
        waiting.resolve(
          answer === null
            ? refusal(waiting.questionId, 'the question left the cluster before an answer')
            : { type: 'answer', id: waiting.questionId, answer: answer.answer, reason: answer.reason, face: answer.face ?? 'acp' },
        );
      }
      const asking = this.asking.get(id);
      if (asking) {
        this.asking.delete(id);
        // Answered on the run's hall (its dashboard), or the run ended: the person here is asked no more.
        asking.abort(
          answer?.face !== undefined
            ? { type: 'answered_elsewhere', answer: answer.answer, face: answer.face }
            : 'the question was withdrawn',
        );
      }
    }
    for (const id of seen.orphaned) {
      const waiting = this.waiting.get(id);
      if (!waiting) continue;
      void this.questions.answer(id, { answer: 'no', reason: 'nobody can answer for this session any more' }).catch(() => undefined);
      waiting.resolve(refusal(waiting.questionId, 'nobody can answer for this session any more'));
    }
    for (const question of seen.open) {
      if (this.asking.has(question.id) || this.waiting.has(question.id)) continue;
      const handler = this.localHandler(question.binding);
      if (!handler) continue;
      const controller = new AbortController();
      this.asking.set(question.id, controller);
      void this.answerHere(handler, question.id, question.question, {
        runId: question.runId,
        binding: question.binding,
        signal: controller.signal,
      });
    }
  }

  /** Puts another hall's question to the handler here and writes its answer, unless the question was settled meanwhile. */
  private async answerHere(handler: PermissionHandler, id: string, question: PermissionQuestion, context: QuestionContext): Promise<void> {
    let answer: ClusterAnswer;
    let byFace = true;
    try {
      const given = await handler(question, context);
      byFace = given.face !== undefined;
      answer = { answer: given.answer, reason: given.reason, face: given.face ?? 'acp' };
    } catch (err) {
      answer = { answer: 'no', reason: `the question could not be asked: ${errorMessage(err)}` };
    }
    if (context.signal.aborted) return;
    this.asking.delete(id);
    // The handler ended it because this hall let the binding go (it stops, or another hall polls the bot now):
    // the question stays open for whichever hall answers for the binding now, or the asker's other faces.
    if (!byFace && context.binding !== undefined && !this.served.has(context.binding)) return;
    this.answeredHere.add(id);
    this.keepLooking();
    try {
      await this.questions.answer(id, answer);
    } catch (err) {
      // Not written: the question is still open, and may be asked again.
      this.answeredHere.delete(id);
      this.problem(`cannot write the answer to a permission question of run ${context.runId}: ${errorMessage(err)}`);
    }
  }

  private problem(message: string): void {
    if (this.lastProblem !== message) this.log(message);
    this.lastProblem = message;
  }
}
