/**
 * The hall side of ACP, shared by every connection (TCP, the stdio bridge's
 * socket): ACP sessions as actors, their prompts turned into missions of
 * binding `acp:SESSION`, the runs' events streamed back as updates, and the
 * runs' permission questions put to the client that owns the session.
 */
import { createActor, fromPromise, type Actor } from 'xstate';
import type { HallServices } from '../../ports/hall-services.js';
import type { AcpUpdate, AnnouncedCalls, PromptAnswer, RunEnd } from '../../domain/acp-mapping.js';
import { decidedByText, isAnsweredElsewhere, type PermissionAnswer, type PermissionQuestion } from '../../domain/permission.js';
import { acpSessionMachine, type AcpSessionEffect } from '../../machines/acp-session.machine.js';
import { permissionQuestionMachine, type ClientChoice, type QuestionInput } from '../../machines/permission-question.machine.js';
import type { Envelope, EnvelopeOf } from '../../ports/bus.js';
import { errorMessage } from '../../domain/error-message.js';
import { documentIn, readDocumentOrNull } from '../storage/events-file.js';
import { eventsPath } from '../../ports/hall-paths.js';
import { raiderSaid, saidIn } from '../storage/slot-logs.js';
import { askClientPermission, type PermissionClient } from './acp-permission-bridge.js';
import { AcpRunStream, sendFinalAnswer, type RunEventSourceFactory } from './acp-run-stream.js';
import { ClusterRunEventTail } from './cluster-run-event-tail.js';
import { RunEventTail } from './run-event-tail.js';
import { definedFields } from '../../domain/defined-fields.js';

/**
 * What the hub needs from the connection that owns a session: it sends
 * session/update (resolving once written) and puts session/request_permission
 * to the client (resolving with the option it chose).
 */
export type AcpClientLink = PermissionClient;

interface PendingQuestion {
  question: PermissionQuestion;
  runId: string;
  resolve: (answer: PermissionAnswer) => void;
}

export interface AcpSessionInfo {
  sessionId: string;
  raider: string;
  cwd: string;
  modeId: string;
}

interface SessionHandle extends AcpSessionInfo {
  actor: Actor<typeof acpSessionMachine>;
  link: AcpClientLink;
  texts: Map<string, string>;
  answers: Map<string, (answer: PromptAnswer) => void>;
  runs: Map<string, AcpRunStream>;
  /**
   * The tool calls each run's client was shown (by run id), whoever showed
   * them first: the run's events, or a permission question, which the
   * raider may ask before the hall's raider.spawned made the run's stream.
   */
  announced: Map<string, AnnouncedCalls>;
  questions: Map<string, PendingQuestion>;
  closed: Promise<void>;
  /** The drops of the session's waiting prompts last asked for: a cancel of its run waits for them (see carryOut). */
  drops: Promise<unknown>;
}

const binding = (sessionId: string) => `acp:${sessionId}`;

/** The tool calls shown for one run of the session, made by whichever shows one first. */
function announcedOf(handle: SessionHandle, runId: string): AnnouncedCalls {
  let calls = handle.announced.get(runId);
  if (calls === undefined) {
    calls = new Map();
    handle.announced.set(runId, calls);
  }
  return calls;
}

export class AcpHub {
  private readonly sessions = new Map<string, SessionHandle>();
  private readonly missions = new Map<string, string>();
  private unsubscribe: (() => void) | null = null;
  private questionCounter = 0;

  constructor(
    private readonly services: HallServices,
    private readonly permissionTimeoutMs: number,
  ) {}

  start(): void {
    this.unsubscribe = this.services.bus.subscribe({ filter: 'raider.', receive: (event) => this.route(event) });
  }

  stop(): void {
    this.unsubscribe?.();
    for (const id of [...this.sessions.keys()]) void this.close(id);
  }

  has(sessionId: string, link: AcpClientLink): boolean {
    return this.sessions.get(sessionId)?.link === link;
  }

  info(sessionId: string): AcpSessionInfo | undefined {
    const s = this.sessions.get(sessionId);
    return s && { sessionId: s.sessionId, raider: s.raider, cwd: s.cwd, modeId: s.modeId };
  }

  count(): number {
    return this.sessions.size;
  }

  /**
   * On a shared cluster, brings this hall's copy of the session's journal up to the cluster's (its runs
   * may have run on other halls) and shares a journal the cluster lacks (a session made here), so its
   * runs continue it on any hall. A database that fails leaves the local journal as it is, and says so.
   */
  async syncJournal(sessionId: string): Promise<void> {
    const journals = this.services.store.shared?.journals;
    if (!journals) return;
    try {
      await journals.pull(sessionId);
      await journals.seed(sessionId);
    } catch (err) {
      this.services.log(`acp: cannot bring the journal of session ${sessionId} in line with the cluster's: ${errorMessage(err)}`);
    }
  }

  /** Opens (or takes over) a session: binds `acp:ID` to the raider session ID and answers its runs' questions. */
  async open(info: AcpSessionInfo, link: AcpClientLink): Promise<void> {
    if (this.sessions.has(info.sessionId)) await this.close(info.sessionId);
    await this.services.request({ type: 'cmd.bindSession', binding: binding(info.sessionId), session: info.sessionId });
    const handle = this.createHandle(info, link);
    this.sessions.set(info.sessionId, handle);
    await this.services.permissionChannels.register(binding(info.sessionId), (question, context) =>
      this.ask(handle, question, context.runId, context.signal),
    );
  }

  /** Forgets a session: its running run is cancelled, its waiting prompts are dropped; the journal stays. */
  async close(sessionId: string): Promise<void> {
    const handle = this.sessions.get(sessionId);
    if (!handle) return;
    this.sessions.delete(sessionId);
    // The machine drops the waiting prompts and cancels the run as session/cancel does
    // (its effects are carried out before send returns): only then are the missions forgotten.
    handle.actor.send({ type: 'acp.close' });
    for (const [missionId, owner] of this.missions) if (owner === sessionId) this.missions.delete(missionId);
    this.services.permissionChannels.unregister(binding(sessionId));
    await handle.closed;
    await this.services.request({ type: 'cmd.unbindSession', binding: binding(sessionId) });
  }

  /**
   * On a shared cluster a session's waiting missions wait in the cluster's queue, not in this hall's:
   * each is cancelled there by its mission id (one that already runs is not found so, and is cancelled by its run id).
   */
  private dropInCluster(sessionId: string): Array<Promise<unknown>> {
    if (!this.services.store.shared) return [];
    const drops: Array<Promise<unknown>> = [];
    for (const [missionId, owner] of this.missions) if (owner === sessionId) drops.push(this.services.command('cancel', { id: missionId }));
    return drops;
  }

  prompt(sessionId: string, text: string): Promise<PromptAnswer> {
    const handle = this.sessions.get(sessionId);
    // The agent checks the session before it prompts; a session closed meanwhile has nobody to answer.
    if (!handle) return Promise.resolve({ error: `no session ${sessionId}` });
    const promptId = `p${++this.questionCounter}`;
    const missionId = this.services.newMissionId();
    handle.texts.set(promptId, text);
    this.missions.set(missionId, sessionId);
    return new Promise((resolve) => {
      handle.answers.set(promptId, resolve);
      handle.actor.send({ type: 'acp.prompt', promptId, missionId });
    });
  }

  cancel(sessionId: string): void {
    this.sessions.get(sessionId)?.actor.send({ type: 'acp.cancel' });
  }

  setMode(sessionId: string, modeId: string): void {
    const handle = this.sessions.get(sessionId);
    if (!handle) return;
    handle.modeId = modeId;
    handle.actor.send({ type: 'acp.setMode', modeId });
  }

  private createHandle(info: AcpSessionInfo, link: AcpClientLink): SessionHandle {
    let resolveClosed!: () => void;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    // Asked only once a run asks, by then `handle` is made.
    const askClient = fromPromise<ClientChoice, QuestionInput>(({ input, signal }) => this.askClient(handle, input, signal));
    const logic = acpSessionMachine.provide({ actors: { question: permissionQuestionMachine.provide({ actors: { askClient } }) } });
    const actor = createActor(logic, {
      id: `acp:${info.sessionId}`,
      input: { sessionId: info.sessionId, modeId: info.modeId, permissionTimeoutMs: this.permissionTimeoutMs },
      ...(this.services.inspect ? { inspect: this.services.inspect } : {}),
    });
    const handle: SessionHandle = {
      ...info,
      actor,
      link,
      texts: new Map(),
      answers: new Map(),
      runs: new Map(),
      announced: new Map(),
      questions: new Map(),
      closed,
      drops: Promise.resolve(),
    };
    handle.actor.on('*', (effect) => this.carryOut(handle, effect, resolveClosed));
    handle.actor.subscribe({ error: (err) => this.services.log(`acp session ${info.sessionId} failed: ${String(err)}`) });
    handle.actor.start();
    const untrack = this.services.trackActor(handle.actor);
    void closed.then(untrack);
    return handle;
  }

  private carryOut(handle: SessionHandle, effect: AcpSessionEffect, resolveClosed: () => void): void {
    switch (effect.type) {
      case 'acp.submit':
        void this.submit(handle, effect.promptId, effect.missionId, effect.modeId);
        return;
      case 'acp.answer': {
        const resolve = handle.answers.get(effect.promptId);
        handle.answers.delete(effect.promptId);
        handle.texts.delete(effect.promptId);
        resolve?.(effect.answer);
        return;
      }
      case 'acp.cancelRun': {
        // The control command: on a shared cluster it reaches a run on another hall.
        // Only once the session's waiting prompts are dropped: the run's end frees
        // the binding, and a prompt still waiting then would start (and run) although
        // its client heard `cancelled`.
        const runId = effect.runId;
        void handle.drops.then(() => this.services.command('cancel', { id: runId }));
        return;
      }
      case 'acp.dropQueued':
        handle.drops = Promise.allSettled([
          handle.drops,
          this.services.request({ type: 'cmd.dropQueued', binding: binding(handle.sessionId) }),
          ...this.dropInCluster(handle.sessionId),
        ]);
        return;
      case 'acp.modeChanged':
        void handle.link.update(handle.sessionId, { sessionUpdate: 'current_mode_update', currentModeId: effect.modeId }).catch(() => {});
        return;
      case 'acp.permissionAnswer': {
        const pending = handle.questions.get(effect.questionId);
        handle.questions.delete(effect.questionId);
        pending?.resolve({ type: 'answer', id: pending.question.id, answer: effect.output.answer, reason: effect.output.reason });
        return;
      }
      case 'acp.closed':
        for (const run of handle.runs.values()) run.stop();
        for (const q of handle.questions.values())
          q.resolve({ type: 'answer', id: q.question.id, answer: 'no', reason: 'the ACP session was closed' });
        for (const resolve of handle.answers.values()) resolve({ stopReason: 'cancelled' });
        handle.questions.clear();
        handle.answers.clear();
        resolveClosed();
        return;
    }
  }

  /**
   * Hands a prompt to the hall. What becomes of a mission the hall took (queued,
   * started, refused, done) comes from the bus alone; the reply is heard only
   * when it refuses a mission the bus never spoke of (the gateway's checks, a
   * hall starting or stopping), as bus events come before the reply.
   */
  private async submit(handle: SessionHandle, promptId: string, missionId: string, modeId: string): Promise<void> {
    const reply = await this.services.request({
      type: 'cmd.spawn',
      missionId,
      name: handle.raider,
      mission: handle.texts.get(promptId) ?? '',
      binding: binding(handle.sessionId),
      permission_mode: modeId,
      cwd: handle.cwd,
      at: Date.now(),
    });
    if (!('error' in reply)) return;
    const pending = this.pendingMission(missionId);
    if (!pending) return;
    this.missions.delete(missionId);
    pending.actor.send({ type: 'hall.rejected', missionId, error: reply.error });
  }

  /** The live session a mission was sent for, while the hall still owes word of it. */
  private pendingMission(missionId: string): SessionHandle | undefined {
    const sessionId = this.missions.get(missionId);
    return sessionId !== undefined ? this.sessions.get(sessionId) : undefined;
  }

  /** Routes a hall event to the session whose mission it is about. */
  private route(event: Envelope): void {
    if (
      event.type !== 'raider.queued' &&
      event.type !== 'raider.spawned' &&
      event.type !== 'raider.refused' &&
      event.type !== 'raider.dropped' &&
      event.type !== 'raider.done'
    )
      return;
    const missionId = event.mission_id;
    const handle = this.pendingMission(missionId);
    if (!handle) return;
    switch (event.type) {
      case 'raider.queued':
        handle.actor.send({ type: 'hall.queued', missionId });
        return;
      case 'raider.spawned':
        this.followRun(handle, missionId, event.id, event.hall);
        return;
      case 'raider.refused':
        this.missions.delete(missionId);
        handle.actor.send({ type: 'hall.rejected', missionId, error: event.error });
        return;
      case 'raider.dropped':
        this.missions.delete(missionId);
        handle.actor.send({ type: 'hall.dropped', missionId });
        return;
      case 'raider.done':
        this.missions.delete(missionId);
        void this.endRun(handle, missionId, event);
        return;
    }
  }

  private followRun(handle: SessionHandle, missionId: string, runId: string, hall: string | undefined): void {
    if (handle.runs.has(runId)) return;
    const stream = new AcpRunStream(
      this.eventSource(runId, hall),
      runId,
      (update) => handle.link.update(handle.sessionId, update),
      (line) => this.services.log(line),
      announcedOf(handle, runId),
    );
    handle.runs.set(runId, stream);
    stream.start();
    handle.actor.send({ type: 'hall.spawned', missionId, runId });
  }

  /** Where a run's events are read: its events file, or the cluster's copy when another hall of a shared cluster runs it. */
  private eventSource(runId: string, hall: string | undefined): RunEventSourceFactory {
    const shared = this.services.store.shared;
    if (shared && hall !== undefined && hall !== shared.hallId) {
      return (onEvent, onFault) => new ClusterRunEventTail(shared.outputs, runId, onEvent, onFault, (line) => this.services.log(line));
    }
    const file = eventsPath(this.services.paths, runId);
    return (onEvent, onFault) => new RunEventTail(file, onEvent, onFault);
  }

  /** What the raider of a run that failed without a result said on stderr (nothing when it left a result). */
  private async raiderSaid(runId: string, hall: string | undefined): Promise<string[]> {
    const shared = this.services.store.shared;
    if (!shared || hall === undefined || hall === shared.hallId) {
      return readDocumentOrNull(eventsPath(this.services.paths, runId)) === null ? raiderSaid(this.services.paths, runId) : [];
    }
    // A run on another hall: its events and its lines of the slot log are in the cluster, complete by its end.
    try {
      const events = await shared.outputs.read(runId, 'events', 0);
      if (events !== null && documentIn(events) !== null) return [];
      const log = await shared.outputs.read(runId, 'log', 0);
      return log === null ? [] : saidIn(log.toString('utf8'), runId);
    } catch (err) {
      this.services.log(`acp: cannot read why run ${runId} failed from the cluster: ${errorMessage(err)}`);
      return [];
    }
  }

  private async endRun(handle: SessionHandle, missionId: string, event: EnvelopeOf<'raider.done'>): Promise<void> {
    const runId = event.id;
    const status = event.status;
    // A run that failed without a result document: the reason is what the raider wrote on stderr.
    const said = status === 'failed' ? await this.raiderSaid(runId, event.hall) : [];
    const end: RunEnd = {
      status,
      signaled: event.signaled,
      ...definedFields({ response: event.response, error: event.error }),
      ...(said.length > 0 ? { said } : {}),
    };
    const stream = handle.runs.get(runId);
    handle.runs.delete(runId);
    handle.announced.delete(runId);
    const send = (update: AcpUpdate) => handle.link.update(handle.sessionId, update);
    await (stream ? stream.finish(end) : sendFinalAnswer(end, send));
    handle.actor.send({ type: 'hall.done', missionId, end, cancelRequested: event.cancel_requested === true });
  }

  private ask(handle: SessionHandle, question: PermissionQuestion, runId: string, signal: AbortSignal): Promise<PermissionAnswer> {
    const questionId = `${runId}:${question.id}:${++this.questionCounter}`;
    // The dashboard or the socket answered first (dashboard.questions): the client's question is withdrawn.
    signal.addEventListener(
      'abort',
      () => {
        const reason: unknown = signal.reason;
        if (isAnsweredElsewhere(reason))
          handle.actor.send({ type: 'question.withdraw', questionId, reason: `answered ${reason.answer} ${decidedByText(reason.face)}` });
      },
      { once: true },
    );
    return new Promise((resolve) => {
      handle.questions.set(questionId, { question, runId, resolve });
      handle.actor.send({ type: 'question.asked', questionId, runId, ...definedFields({ rule: question.rule }) });
    });
  }

  /** The question machine's `askClient`: the question, if still pending, put to the session's client. */
  private async askClient(handle: SessionHandle, input: QuestionInput, signal: AbortSignal): Promise<ClientChoice> {
    const pending = handle.questions.get(input.questionId);
    if (!pending) return 'cancelled';
    const { question, runId } = pending;
    // The call asked about is shown first as the run's events say it (an ACP agent's diff, say), not only as the question does.
    handle.runs.get(runId)?.catchUp();
    const target = { sessionId: handle.sessionId, runId, question, announced: announcedOf(handle, runId) };
    return askClientPermission(handle.link, target, signal);
  }
}
