/**
 * A hall's part in a shared cluster: it claims missions from the cluster's
 * queue while the hall has room (`max_running` minus the room its actor has
 * given out) and hands each to the hall actor as `cluster.claimed`; it looks
 * for halls whose lease expired, takes their work over and has the actor
 * report their runs; and when this hall finds it was itself taken for lost,
 * it has the actor stop the runs the cluster no longer holds as its own.
 *
 * The database decides which hall runs what; the actor only hears the result.
 */
import type { Actor } from 'xstate';
import { INSPECT_PREFIX } from '../adapters/control/event-bus.js';
import type { EventBus } from '../ports/bus.js';
import type { BusEvent } from '../machines/hall-effects.js';
import type { LostRun, SharedQueue } from '../ports/cluster-queue.js';
import type { HallStateStore } from '../ports/state-store.js';
import { type DurableOp, noDirt } from '../ports/durable-state.js';
import { AGENT_SESSIONS_NS, type AgentSessionRecord } from '../protocol/agent-session.js';
import { errorMessage } from '../domain/error-message.js';
import type { hallMachine } from '../machines/hall.machine.js';
import { doneEvent, type EndedRun } from '../machines/hall-payloads.js';
import type { RunOutputMirror } from './run-output-mirror.js';
import type { RunOutputShipper } from './run-output-shipper.js';
import { knownRaiderIds, orphanRaiders } from './run-recovery.js';
import { SerialQueue } from '../adapters/storage/serial-queue.js';
import { signalGroup } from '../adapters/os/process-group.js';
import { pullPatiently } from './patient-journal-pull.js';
import { definedFields } from '../domain/defined-fields.js';

/** How often a hall looks for work and for lost halls without a doorbell (a notification can be lost). */
const POLL_MS = 500;
/** Claims per round trip when the hall has no limit. */
const CLAIM_BATCH = 32;
/** How long a claimed binding's mission waits for its journal while the database cannot answer (a restart), and how often it asks. */
const JOURNAL_PATIENCE_MS = 10_000;
const JOURNAL_RETRY_MS = 250;
/** How often a hall drops events old enough for every hall to have relayed them. */
const PRUNE_MS = 60_000;

export class ClusterWorker {
  private timer: NodeJS.Timeout | null = null;
  /** One claim round at a time; a wake during one asks for one more (so does a relay request). */
  private readonly claims = new SerialQueue();
  private readonly relays = new SerialQueue();
  private stopped = false;
  private lastProblem: string | null = null;
  /** This hall's events not yet written for the others. */
  private outbox: BusEvent[] = [];
  private sharing = false;
  /** The last cluster event id relayed (null until the first read). */
  private lastEvent: number | null = null;
  /** True while the bus delivers an event relayed from the cluster (the bus delivers synchronously). */
  private publishingRelayed = false;
  private pruneTimer: NodeJS.Timeout | null = null;
  private signalCount = 0;

  constructor(
    private readonly actor: Actor<typeof hallMachine>,
    private readonly queue: SharedQueue,
    private readonly store: Pick<HallStateStore, 'state' | 'commit'>,
    private readonly maxRunning: number | null,
    private readonly bus: Pick<EventBus, 'publish' | 'subscribe'>,
    private readonly log: (line: string) => void,
    private readonly output: { shipper: RunOutputShipper; mirror: RunOutputMirror },
    private readonly root: string,
  ) {}

  /**
   * Every event of this hall goes to the cluster; those of the others (named by their hall) come back from it.
   * Called before the hall's boot: the boot's own events (the runs a previous hall left, reported) are shared too.
   */
  shareOwnEvents(): void {
    this.bus.subscribe({
      filter: '',
      receive: (envelope) => {
        // A hall's own lifecycle (hall.started, hall.stopping) stays its own: clients read it as their hall's.
        if (envelope.hall !== this.queue.hallId || envelope.type.startsWith(INSPECT_PREFIX) || envelope.type.startsWith('hall.')) return;
        // Relayed from the cluster, so already there: a takeover's report names this hall when it was the lost one.
        if (this.publishingRelayed) return;
        const { version: _v, seq: _s, ts: _t, ...event } = envelope;
        this.outbox.push(event);
        this.share();
      },
    });
  }

  start(): void {
    this.stopOrphans();
    this.pruneTimer = setInterval(() => void this.queue.pruneEvents().catch(() => undefined), PRUNE_MS);
    this.pruneTimer.unref();
    this.queue.onDoorbell(() => {
      this.wake();
      this.relay();
      void this.takeSignals();
    });
    this.queue.onReplaced(() => void this.stopReplacedRuns());
    // Their missions may run on another hall now: they are stopped before their raiders start, silently.
    this.queue.onRunsRefused((runIds) => this.actor.send({ type: 'cluster.replaced', runIds: [...runIds] }));
    // A run's end leaves room here, and (once its end commits) frees its slot and binding: the doorbell rings then.
    this.actor.on('bus', (e) => {
      if (e.event.type === 'raider.done' || e.event.type === 'raider.refused') this.wake();
    });
    this.timer = setInterval(() => {
      void this.output.shipper.beat();
      void this.rescue();
      this.wake();
      this.relay();
      void this.takeSignals();
    }, POLL_MS);
    this.timer.unref();
    this.wake();
    this.relay();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.output.mirror.stop();
  }

  /** Writes what the outbox holds, one write at a time; events of one burst share it. */
  private share(): void {
    if (this.sharing || this.outbox.length === 0) return;
    this.sharing = true;
    setImmediate(() => {
      const batch = this.outbox;
      this.outbox = [];
      // What the events tell is committed first (a run's end before its raider.done): a hall killed in
      // between must not leave a raider.done in the cluster for a run the others then report lost.
      // A run's output is in the cluster before its end is: an attach on another hall shows it all.
      const ended = batch.flatMap((e) => (e.type === 'raider.done' ? [e] : []));
      void this.store
        .commit()
        .then(() => Promise.all(ended.map((e) => this.output.shipper.final(e.id, e.slot))))
        .then(() => this.queue.shareEvents(batch))
        .catch((err: unknown) => this.problem(`cannot share ${batch.length} events with the cluster: ${errorMessage(err)}`))
        .finally(() => {
          this.sharing = false;
          this.share();
        });
    });
  }

  /** Publishes on this hall's bus the events the other halls wrote since the last read. */
  private relay(): void {
    void this.relays.once('relay', async () => {
      try {
        for (;;) {
          const { last, events } = await this.queue.eventsSince(this.lastEvent);
          const more = this.lastEvent !== null && last > this.lastEvent && events.length > 0;
          this.lastEvent = last;
          // An event names the hall it happened on; a takeover's report names the lost hall, not its writer.
          for (const { hall, event } of events) {
            // Whoever follows this hall's copy of the run's output gets all of it before the end.
            if (event.type === 'raider.done' && this.output.mirror.has(event.id)) await this.output.mirror.finish(event.id);
            this.publishingRelayed = true;
            try {
              this.bus.publish({ hall, ...event });
            } finally {
              this.publishingRelayed = false;
            }
          }
          if (!more) break;
        }
      } catch (err) {
        this.problem(`cannot read the cluster's events: ${errorMessage(err)}`);
      }
    });
  }

  /** Claims until the hall is full or nothing is claimable; one claim at a time, a wake during one runs another. */
  private wake(): void {
    if (this.stopped) return;
    void this.claims.once('claim', () => this.claimWhileRoom());
  }

  private async claimWhileRoom(): Promise<void> {
    for (;;) {
      const snapshot = this.actor.getSnapshot();
      if (this.stopped || snapshot.status !== 'active' || !snapshot.matches('running')) return;
      const room = this.maxRunning === null ? CLAIM_BATCH : Math.min(CLAIM_BATCH, this.maxRunning - snapshot.context.tickets);
      if (room <= 0) return;
      let claimed: Awaited<ReturnType<SharedQueue['claim']>>;
      try {
        claimed = await this.queue.claim(room);
        this.recovered();
      } catch (err) {
        this.problem(`cannot claim missions from the cluster: ${errorMessage(err)}`);
        return;
      }
      // The binding's last run may have been on another hall: its journal comes here before the run starts.
      await Promise.all(claimed.map(({ session }) => (session === undefined ? undefined : this.pullJournal(session))));
      for (const { entry, session, agentSession, runId, at } of claimed) {
        if (session !== undefined) this.learnAgentSession(session, agentSession);
        this.actor.send({ type: 'cluster.claimed', entry, runId, at, ...definedFields({ session }) });
      }
      if (claimed.length < room) return;
    }
  }

  /**
   * The cluster's record of the session's ACP agent session is the truth (another hall may have run the
   * binding since): this hall's copy of the state takes it before the run starts, as it took it at start-up.
   * Nothing is written: the database already holds it.
   */
  private learnAgentSession(session: string, record: AgentSessionRecord | undefined): void {
    const op: DurableOp =
      record !== undefined
        ? { op: 'set', ns: AGENT_SESSIONS_NS, key: session, value: record }
        : { op: 'unset', ns: AGENT_SESSIONS_NS, key: session };
    this.store.state.apply(op, noDirt());
  }

  /** A journal that cannot be brought here (the database away for longer than the patience) leaves the run to start the binding's session over (prepareRun does so). */
  private async pullJournal(session: string): Promise<void> {
    await pullPatiently(session, {
      pull: () => this.queue.journals.pull(session),
      stopped: () => this.stopped,
      log: this.log,
      patienceMs: JOURNAL_PATIENCE_MS,
      retryMs: JOURNAL_RETRY_MS,
    });
  }

  private async rescue(): Promise<void> {
    if (this.stopped) return;
    let lost: LostRun[];
    try {
      lost = await this.queue.rescue((run) => lostRunDone(run, this.queue.hallId));
    } catch (err) {
      this.problem(`cannot look for lost halls: ${errorMessage(err)}`);
      return;
    }
    if (lost.length === 0) return;
    // The cluster has the reports; this hall's subscribers hear them here (its relay skips its own rows).
    for (const run of lost) this.bus.publish(lostRunDone(run, this.queue.hallId));
    this.wake();
  }

  /** Cancels and kills sent to other halls for this hall's runs: carried out here, where the raider runs. */
  private async takeSignals(): Promise<void> {
    if (this.stopped) return;
    let signals: Awaited<ReturnType<SharedQueue['takeSignals']>>;
    try {
      signals = await this.queue.takeSignals();
    } catch (err) {
      this.problem(`cannot read the cancels sent from other halls: ${errorMessage(err)}`);
      return;
    }
    for (const { runId, signal } of signals) {
      // The reply goes nowhere: the hall that was asked already answered its client.
      const reqId = `cluster-signal-${++this.signalCount}`;
      this.actor.send(signal === 'kill' ? { type: 'cmd.kill', reqId, id: runId } : { type: 'cmd.cancel', reqId, id: runId });
    }
  }

  /**
   * Raiders a previous process of this hall left running whose runs are not in its ledger any more: the
   * cluster took them over while it was gone and reported them failed, so they must not go on unwatched.
   * Called after the boot (which adopted the runs the ledger still holds) and before any claim.
   */
  private stopOrphans(): void {
    const orphans = orphanRaiders(this.root, knownRaiderIds(this.store.state.runs.values()));
    if (orphans.length === 0) return;
    this.log(
      `stopping ${orphans.length} raiders a previous hall process left running, whose runs the cluster reported failed: ${orphans.map((o) => o.runId).join(', ')}`,
    );
    for (const { pid } of orphans) signalGroup(pid, 'SIGTERM');
    // Escalated as a cancel is, without waiting for it: nothing here waits on these processes.
    setTimeout(() => {
      for (const { pid } of orphans) signalGroup(pid, 'SIGKILL');
    }, ORPHAN_GRACE_MS).unref();
  }

  /** This hall had been taken for lost: the runs the cluster reported for it are stopped here, silently. */
  private async stopReplacedRuns(): Promise<void> {
    const mine = [...this.store.state.runs.keys()];
    try {
      const held = await this.queue.stillHeld(mine);
      const gone = mine.filter((id) => !held.has(id));
      if (gone.length > 0) {
        this.log(`stopping ${gone.length} runs another hall reported failed while this one was taken for lost: ${gone.join(', ')}`);
        this.actor.send({ type: 'cluster.replaced', runIds: gone });
      }
    } catch (err) {
      this.problem(`cannot check which runs the cluster still holds: ${errorMessage(err)}`);
    }
  }

  private problem(message: string): void {
    if (this.lastProblem !== message) this.log(message);
    this.lastProblem = message;
  }

  private recovered(): void {
    this.lastProblem = null;
  }
}

/** A lost hall's run as the cluster reports it: `raider.done`, failed, naming the hall and its reporter; never run again. */
function lostRunDone(lost: LostRun, reporter: string): BusEvent {
  return { ...doneEvent(lostRunEnded(lost)), hall: lost.hall, reported_by: reporter };
}

function lostRunEnded({ run, hall }: LostRun): EndedRun {
  return {
    runId: run.id,
    slot: run.slot,
    pid: run.pid ?? 0,
    entry: run.entry,
    ...(run.binding !== undefined && run.session !== undefined ? { binding: run.binding, session: run.session } : {}),
    outcome: {
      status: 'failed',
      exit_code: 0,
      signaled: 0,
      error: `the hall ${hall} that ran it was lost (its lease expired); the run was not repeated`,
    },
  };
}

/** How long a left-over raider has between SIGTERM and SIGKILL. */
const ORPHAN_GRACE_MS = 5_000;
