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
import type { LostRun, SharedQueue } from '../adapters/storage/shared-queue.js';
import type { HallStateStore } from '../adapters/storage/state-store.js';
import { errorMessage } from '../domain/error-message.js';
import type { EndedRun, hallMachine } from '../machines/hall.machine.js';

/** How often a hall looks for work and for lost halls without a doorbell (a notification can be lost). */
const POLL_MS = 500;
/** Claims per round trip when the hall has no limit. */
const CLAIM_BATCH = 32;

export class ClusterWorker {
  private timer: NodeJS.Timeout | null = null;
  private claiming = false;
  private again = false;
  private stopped = false;
  private lastProblem: string | null = null;

  constructor(
    private readonly actor: Actor<typeof hallMachine>,
    private readonly queue: SharedQueue,
    private readonly store: Pick<HallStateStore, 'state'>,
    private readonly maxRunning: number | null,
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    this.queue.onDoorbell(() => this.wake());
    this.queue.onReplaced(() => void this.stopReplacedRuns());
    // A run's end leaves room here, and (once its end commits) frees its slot and binding: the doorbell rings then.
    this.actor.on('bus', (e) => {
      if (e.event.type === 'raider.done' || e.event.type === 'raider.refused') this.wake();
    });
    this.timer = setInterval(() => {
      void this.rescue();
      this.wake();
    }, POLL_MS);
    this.timer.unref();
    this.wake();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }

  /** Claims until the hall is full or nothing is claimable; one claim at a time, a wake during one runs another. */
  private wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = true;
    void this.claimWhileRoom().finally(() => {
      this.claiming = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
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
      for (const { entry, session } of claimed) {
        this.actor.send({ type: 'cluster.claimed', entry, at: Date.now(), ...(session !== undefined ? { session } : {}) });
      }
      if (claimed.length < room) return;
    }
  }

  private async rescue(): Promise<void> {
    if (this.stopped) return;
    let lost: LostRun[];
    try {
      lost = await this.queue.rescue();
    } catch (err) {
      this.problem(`cannot look for lost halls: ${errorMessage(err)}`);
      return;
    }
    if (lost.length === 0) return;
    this.actor.send({ type: 'cluster.runsLost', runs: lost.map(lostRunEnded) });
    this.wake();
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

/** A lost hall's run as this hall reports it: failed, naming the hall, never run again. */
export function lostRunEnded({ run, hall }: LostRun): EndedRun {
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
