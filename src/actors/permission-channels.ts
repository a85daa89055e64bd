/**
 * Per-run permission channels (docs/raider.md, "The permission channel"). A surface that can ask a person
 * registers a handler for a binding; a run of that binding gets a UNIX socket
 * of its own and `--permission-channel PATH`. Every question on it gets
 * exactly one answer: the handler's, or `no` when the handler fails, the
 * channel closes or the run ends. On a shared cluster a run whose binding
 * another hall answers for (its ACP session is open there) is asked through
 * the cluster (cluster-permissions.ts), and so is one whose questions
 * another hall also asks (`alsoAsk`: a Telegram bot's questions chat, on the
 * hall that polls the bot).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import stringify from 'safe-stable-stringify';
import { type AnsweredElsewhere, parseQuestion, refusal, type PermissionAnswer, type PermissionQuestion } from '../domain/permission.js';
import { onLines } from '../adapters/os/unix-socket.js';
import { listenUnix, type UnixListener } from '../os/socket-path.js';
import type { FaceAnswer, PermissionHandler, PermissionRegistry, QuestionContext } from '../ports/permission-registry.js';
import { describeLineFault, MAX_LINE_BYTES, type LineFault } from '../protocol/line-reader.js';
import { errorMessage } from '../domain/error-message.js';
import type { ClusterPermissions } from './cluster-permissions.js';
import { definedFields } from '../domain/defined-fields.js';

interface OpenChannel {
  server: net.Server;
  listener: UnixListener;
  abort: AbortController;
}

export class PermissionChannels implements PermissionRegistry {
  private readonly handlers = new Map<string, PermissionHandler>();
  private fallback: PermissionHandler | null = null;
  private fallbackCovers: (binding: string | undefined) => boolean = () => true;
  private readonly channels = new Map<string, OpenChannel>();
  /** alsoAsk: bindings another hall may answer for, with the runs' bindings whose questions go there too. */
  private readonly relays = new Map<string, (binding: string | undefined) => boolean>();

  constructor(
    private readonly dir: string,
    private readonly warn: (message: string) => void,
    private readonly cluster: ClusterPermissions | null = null,
  ) {
    cluster?.answerWith((binding) => this.handlers.get(binding));
  }

  async register(binding: string, handler: PermissionHandler): Promise<void> {
    this.handlers.set(binding, handler);
    await this.cluster?.serve(binding);
  }

  unregister(binding: string): void {
    this.handlers.delete(binding);
    void this.cluster?.unserve(binding);
  }

  alsoAsk(via: string, covers: (binding: string | undefined) => boolean): void {
    if (this.cluster !== null) this.relays.set(via, covers);
  }

  setDefault(handler: PermissionHandler | null, covers: (binding: string | undefined) => boolean = () => true): void {
    this.fallback = handler;
    this.fallbackCovers = covers;
  }

  /** The default handler when it covers the binding. */
  private fallbackFor(binding: string | undefined): PermissionHandler | undefined {
    return this.fallback !== null && this.fallbackCovers(binding) ? this.fallback : undefined;
  }

  /** Who answers for a binding now: whoever registered for it, else the default. */
  private handlerFor(binding: string | undefined): PermissionHandler | undefined {
    return (binding !== undefined ? this.handlers.get(binding) : undefined) ?? this.fallbackFor(binding);
  }

  /**
   * The cluster's asking handlers: the binding's own when another hall answers for it and no handler
   * here does, and one for each `alsoAsk` that takes the binding and another hall answers for.
   */
  private async remotesFor(binding: string | undefined): Promise<Remote[]> {
    const cluster = this.cluster;
    if (cluster === null) return [];
    const via: string[] = [];
    if (binding !== undefined && !this.handlers.has(binding)) via.push(binding);
    for (const [relay, covers] of this.relays) if (relay !== binding && !this.handlers.has(relay) && covers(binding)) via.push(relay);
    const elsewhere = await Promise.all(via.map((b) => cluster.servedElsewhere(b)));
    return via
      .filter((_, i) => elsewhere[i] === true)
      .map((b) => (b === binding ? { ask: cluster.ask, beside: false } : { ask: relayTo(cluster.ask, b), beside: true }));
  }

  /** Opens a channel for the run when someone can answer for its binding; returns its path or null. */
  async open(runId: string, binding: string | undefined): Promise<string | null> {
    if (this.handlerFor(binding) === undefined && (await this.remotesFor(binding)).length === 0) return null;
    await fs.promises.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const abort = new AbortController();
    const server = net.createServer((socket) => this.serve(socket, runId, binding, abort.signal));
    // The raider gets the path that is bound: short, whatever the length of the root.
    const listener = await listenUnix(server, path.join(this.dir, `${runId}.sock`));
    this.channels.set(runId, { server, listener, abort });
    return listener.boundPath;
  }

  /** The run ended: open questions are answered `no`, the socket goes away. */
  close(runId: string): void {
    const channel = this.channels.get(runId);
    if (!channel) return;
    this.channels.delete(runId);
    channel.abort.abort();
    channel.server.close();
    channel.listener.remove();
  }

  closeAll(): void {
    for (const runId of [...this.channels.keys()]) this.close(runId);
    this.cluster?.stop();
  }

  private serve(socket: net.Socket, runId: string, binding: string | undefined, runSignal: AbortSignal): void {
    const connection = new AbortController();
    const onRunEnd = () => connection.abort();
    runSignal.addEventListener('abort', onRunEnd, { once: true });
    const onFault = (fault: LineFault) => this.warn(`permission channel of ${runId}: ${describeLineFault(fault)}; skipped`);
    onLines(
      socket,
      (line) => {
        if (line.trim() === '') return;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          this.warn(`permission channel of ${runId}: not JSON: ${line.slice(0, 120)}`);
          return;
        }
        const question = parseQuestion(value);
        if (!question) {
          this.warn(`permission channel of ${runId}: not a question: ${line.slice(0, 120)}`);
          return;
        }
        void this.answer(socket, question, runId, binding, connection.signal);
      },
      { maxBytes: MAX_LINE_BYTES, onFault },
    );
    socket.on('close', () => {
      connection.abort();
      runSignal.removeEventListener('abort', onRunEnd);
    });
    socket.on('error', () => socket.destroy());
  }

  private async answer(
    socket: net.Socket,
    question: PermissionQuestion,
    runId: string,
    binding: string | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const remotes = await this.remotesFor(binding);
    const registered = binding !== undefined ? this.handlers.get(binding) : undefined;
    const own = registered ?? remotes.find((r) => !r.beside)?.ask;
    const beside = this.fallbackFor(binding);
    const relays = remotes.filter((r) => r.beside);
    // The desk registered for the binding (a Telegram chat on a shared cluster) is also the default: asked once.
    const faces = beside !== undefined && beside !== own ? [beside] : [];
    const asked = (own !== undefined ? 1 : 0) + relays.length + faces.length;
    const others = [...relays.map((r) => r.ask(asked > 1)), ...faces];
    const handler = own ?? others[0];
    let answer: PermissionAnswer;
    if (!handler) {
      answer = refusal(question.id, 'nobody can answer for this session any more');
    } else {
      try {
        const moot = new Promise<PermissionAnswer>((resolve) => {
          const settle = () => resolve(refusal(question.id, 'the run ended or its channel closed before an answer'));
          if (signal.aborted) settle();
          else signal.addEventListener('abort', settle, { once: true });
        });
        const context = { runId, ...definedFields({ binding }), signal };
        answer = await Promise.race([asked === 1 ? handler(question, context) : this.firstOf(question, context, own, others), moot]);
      } catch (err) {
        answer = refusal(question.id, `the question could not be asked: ${errorMessage(err)}`);
      }
    }
    if (!socket.destroyed)
      socket.write(`${stringify({ type: 'answer', id: question.id, answer: answer.answer, reason: answer.reason })}\n`);
  }

  /**
   * A run an ACP client watches, with the dashboard's questions on, or with
   * a Telegram questions chat on another hall: all are asked, the first
   * answer wins, and the other faces' questions are withdrawn with an
   * AnsweredElsewhere reason that says who answered.
   */
  private async firstOf(
    question: PermissionQuestion,
    context: QuestionContext,
    own: PermissionHandler | undefined,
    others: readonly PermissionHandler[],
  ): Promise<PermissionAnswer> {
    const decided = new AbortController();
    const signal = AbortSignal.any([context.signal, decided.signal]);
    const asked: Array<Promise<FaceAnswer>> = [
      ...(own !== undefined ? [own(question, { ...context, signal }).then((a): FaceAnswer => ({ ...a, face: a.face ?? 'acp' }))] : []),
      ...others.map((other) => other(question, { ...context, signal })),
    ];
    let first: FaceAnswer;
    try {
      first = await Promise.race(asked);
    } catch (err) {
      decided.abort(err);
      throw err;
    }
    const elsewhere: AnsweredElsewhere = { type: 'answered_elsewhere', answer: first.answer, face: first.face ?? 'acp' };
    decided.abort(elsewhere);
    return first;
  }
}

type Remote =
  | { ask: PermissionHandler; beside: false }
  /** alsoAsk's: patient beside other faces, see relayTo. */
  | { ask: (patient: boolean) => PermissionHandler; beside: true };

/**
 * Asks the hall that answers for `via` through the cluster. When `patient`
 * (other faces are asked beside), an answer that no face gave (nobody
 * answers for `via` any more, the cluster's own limit) is no answer: it
 * waits until the question is moot, so the other faces decide.
 */
function relayTo(ask: PermissionHandler, via: string): (patient: boolean) => PermissionHandler {
  return (patient) => async (question, context) => {
    const answer = await ask(question, { ...context, binding: via });
    if (!patient || answer.face !== undefined || context.signal.aborted) return answer;
    return new Promise<FaceAnswer>((resolve) => context.signal.addEventListener('abort', () => resolve(answer), { once: true }));
  };
}
