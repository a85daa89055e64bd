/**
 * Commands that change the hall go to the hall actor as events with a request
 * id; its `reply` comes back as an emitted event, and is handed out only once
 * everything it depends on is on disk. A mission is checked here, whichever
 * face sent it, so the hall actor only ever sees safe names.
 */
import type { Actor } from 'xstate';
import type { HallStateStore } from '../ports/state-store.js';
import { errorMessage } from '../domain/error-message.js';
import { missionOf, type HallCommand, type hallMachine, type SpawnCommand } from '../machines/hall.machine.js';
import type { BusEvent, ReplyBody } from '../machines/hall-effects.js';
import { missionQueuedEvent, missionQueuedReply } from '../machines/hall-payloads.js';
import { checkCommand } from '../protocol/frames.js';
import type { HallRequest, HallRequestReply } from '../ports/hall-services.js';
import type { SpawnQueuedReply, SpawnStartedReply } from '../protocol/replies.js';
import { definedFields } from '../domain/defined-fields.js';

/** A reply the hall owes for longer than this means a bug; the client still gets an answer. */
const REPLY_TIMEOUT_MS = 120_000;
/** How often the replies owed are looked at for one past its time (one timer for all, not one per request). */
const SWEEP_MS = 5_000;

interface Owed {
  resolve: (body: ReplyBody) => void;
  deadline: number;
  notice: string | undefined;
}

export class HallGateway {
  /** In the order they were asked, so the oldest come first. */
  private readonly pending = new Map<string, Owed>();
  private sweeper: NodeJS.Timeout | null = null;
  private counter = 0;

  constructor(
    private readonly hall: Actor<typeof hallMachine>,
    /** Only what a reply waits on: whether a mission can be recorded, and its commit; and the shared cluster's queue, if any. */
    private readonly store: Pick<HallStateStore, 'accepting' | 'lastError' | 'commit' | 'shared'>,
    /** What the reply to a spawn of this name should tell the client besides (a name without a config entry). */
    private readonly spawnNotice: (name: string) => string | undefined = () => undefined,
    /** Publishes on the event bus what the gateway does itself (a mission queued in a shared cluster). */
    private readonly publish: (event: BusEvent) => void = () => undefined,
  ) {
    hall.on('reply', (event) => this.settle(event.reqId, event.body));
  }

  request<R extends HallRequest>(command: R): Promise<HallRequestReply<R>>;
  request(command: HallRequest): Promise<ReplyBody> {
    return this.dispatch(command, false);
  }

  /**
   * A spawn whose name, mission and binding the command service has already
   * checked against the spawn schema (the control socket, MCP): the same as
   * `request`, without checking them a second time.
   */
  spawnChecked(command: Omit<SpawnCommand, 'reqId'>): Promise<HallRequestReply<Omit<SpawnCommand, 'reqId'>>>;
  spawnChecked(command: Omit<SpawnCommand, 'reqId'>): Promise<ReplyBody> {
    return this.dispatch(command, true);
  }

  private dispatch(command: HallRequest, checked: boolean): Promise<ReplyBody> {
    // A mission is taken only when it can be recorded: with the state directory full (or
    // unwritable) the client hears so at once, and nothing runs that it was told failed.
    if (command.type === 'cmd.spawn' && !this.store.accepting()) {
      return Promise.resolve({ error: `mission not accepted: ${this.store.lastError() ?? 'the hall cannot record it'}` });
    }
    if (command.type === 'cmd.spawn') {
      if (!checked) {
        const check = checkCommand('spawn', { cmd: 'spawn', name: command.name, mission: command.mission, binding: command.binding });
        if (!check.ok) return Promise.resolve({ error: check.error });
      }
      if (this.store.shared) return this.submitShared(command);
    }
    const reqId = `req-${++this.counter}`;
    const notice = command.type === 'cmd.spawn' ? this.spawnNotice(command.name) : undefined;
    return new Promise((resolve) => {
      this.pending.set(reqId, { resolve, deadline: Date.now() + REPLY_TIMEOUT_MS, notice });
      this.sweepLater();
      // Object.assign, not a spread: on Node 20 a field a literal adds after a spread takes V8's slow path (~1-2 us).
      this.hall.send(Object.assign({}, command, { reqId }) as HallCommand);
    });
  }

  /** Answers the replies owed past their time, while any is owed. */
  private sweepLater(): void {
    if (this.sweeper !== null) return;
    this.sweeper = setTimeout(() => {
      this.sweeper = null;
      const now = Date.now();
      for (const [reqId, owed] of this.pending) {
        if (owed.deadline > now) break;
        this.pending.delete(reqId);
        owed.resolve({ error: 'the hall did not answer in time' });
      }
      if (this.pending.size > 0) this.sweepLater();
    }, SWEEP_MS);
    this.sweeper.unref();
  }

  /**
   * In a shared cluster a mission goes to the cluster's queue, whichever hall
   * received it; the hall with room that claims it runs it. The reply says
   * `queued` once the row is committed.
   */
  private async submitShared(command: Omit<SpawnCommand, 'reqId'>): Promise<ReplyBody> {
    const shared = this.store.shared;
    if (!shared) return { error: 'the hall is not part of a shared cluster' };
    const entry = missionOf(command);
    try {
      const { depth } = await shared.submit(entry);
      this.publish(missionQueuedEvent(entry, depth, entry.binding));
      const notice = this.spawnNotice(entry.name);
      const reply = missionQueuedReply(entry, depth, entry.binding);
      // As a local queued reply: its keys in the same order, the notice among them.
      return notice !== undefined ? withNotice(reply, notice) : reply;
    } catch (err) {
      return { error: `mission not accepted: the cluster's queue cannot record it: ${errorMessage(err)}` };
    }
  }

  private settle(reqId: string, body: ReplyBody): void {
    const waiter = this.pending.get(reqId);
    if (!waiter) return;
    this.pending.delete(reqId);
    const answer = waiter.notice !== undefined && isTakenSpawn(body) ? withNotice(body, waiter.notice) : body;
    this.store.commit().then(
      () => waiter.resolve(answer),
      (err: Error) => waiter.resolve({ error: err.message }),
    );
  }
}

/**
 * A taken spawn's reply with its notice. A queued reply keeps its keys in
 * sorted order, so the socket writes it with the native JSON writer (with the
 * notice at the end it went the slow way: 6% of the hall's CPU in a burst of
 * queued spawns to a name without a config entry).
 */
function withNotice(body: SpawnStartedReply | SpawnQueuedReply, notice: string): SpawnStartedReply | SpawnQueuedReply {
  if ('queued' in body) {
    // A field the reply gains later is kept (at the end: the slow way, but not lost).
    const { binding, mission_id, position, queue_depth, queued, slot, ...later } = body;
    return { ...definedFields({ binding }), mission_id, notice, position, queue_depth, queued, slot, ...later };
  }
  return Object.assign({}, body, { notice });
}

/** A spawn reply whose mission was taken (started or queued): one that may carry a notice. */
function isTakenSpawn(body: ReplyBody): body is SpawnStartedReply | SpawnQueuedReply {
  return 'mission_id' in body && !('error' in body) && !('status' in body);
}
