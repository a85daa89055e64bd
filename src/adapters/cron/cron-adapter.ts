/**
 * The hall's cron face:
 * one cron job machine per configured job, each bound `cron:ID`.
 *
 * At start every job's record is read back (state/cron.json): the last slot
 * handled, so a restart never fires one slot twice, and slots missed while
 * the hall was down are caught up once or skipped as the job says. `status`
 * shows each job's next fire time and its last outcome, which follows the
 * job's run to its end.
 */
import { createActor, type Actor } from 'xstate';
import type { HallAdapter, HallAdapterFactory, HallServices } from '../../ports/hall-services.js';
import { HallStartError } from '../../ports/hall-start-error.js';
import { cronConfigErrors } from '../../domain/cron-config.js';
import { ON_TIME_GRACE_MS } from '../../domain/cron-plan.js';
import { handledUpTo, newCronRecord, noteRunEvent, resolvePending, type RunEvent } from '../../domain/cron-record.js';
import { nextFireAt, type cronJobMachine } from '../../machines/cron-job.machine.js';
import type { CronJobConfig } from '../../ports/hall-config.js';
import { cronJobLogic, type CronJobWorld } from './cron-job-actors.js';
import { CronRecords, missionWhereabouts } from './cron-records.js';
import { errorMessage } from '../../domain/error-message.js';
import { noEntryNotice, slotOf } from '../../domain/names.js';
import { ownEntry } from '../../domain/own-entry.js';
import { definedFields } from '../../domain/defined-fields.js';

export interface CronAdapterOptions {
  /** The wall clock (tests may shift it). */
  now?: () => number;
  /**
   * The longest a job sleeps before it reads the wall clock again. A minute
   * bounds how late a slot runs after a suspend or a clock change (Node's
   * timers follow the monotonic clock, which stops while the machine sleeps).
   */
  maxSleepMs?: number;
}

export const DEFAULT_CRON_RECHECK_MS = 60_000;

/** Builds the cron adapter; a config with no cron jobs gets none. Throws a configuration error (exit 3) for a job that cannot work. */
export function cronAdapter(options: CronAdapterOptions = {}): HallAdapterFactory {
  return (services) => {
    const jobs = services.config.cron;
    if (jobs.length === 0) return null;
    const errors = cronConfigErrors(jobs, services.paths.config);
    if (errors.length > 0) throw new HallStartError(errors.join('\n'), 3);
    // As a spawn of such a name is told: it runs, on the raider's defaults, which is rarely what was meant.
    for (const job of jobs) {
      if (ownEntry(services.config.raiders, slotOf(job.name).baseName) === undefined) {
        services.log(`cron job ${JSON.stringify(job.id)}: ${noEntryNotice(job.name)}`);
      }
    }
    return new CronAdapter(services, jobs, options);
  };
}

type JobActor = Actor<typeof cronJobMachine>;

class CronAdapter implements HallAdapter {
  readonly name = 'cron';
  private readonly records: CronRecords;
  private readonly actors = new Map<string, JobActor>();
  /** Each job's untrack from the hall's inspection. */
  private readonly untrack: Array<() => void> = [];
  private readonly now: () => number;
  private stopping = false;
  private readonly world: CronJobWorld;

  constructor(
    private readonly services: HallServices,
    private readonly jobs: readonly CronJobConfig[],
    private readonly options: CronAdapterOptions,
  ) {
    this.records = new CronRecords(services.store);
    this.now = options.now ?? Date.now;
    this.world = {
      services,
      records: this.records,
      now: this.now,
      stopping: () => this.stopping,
      earlyEvents: new Map(),
    };
  }

  async start(): Promise<void> {
    const now = this.now();
    this.records.forgetAllBut(new Set(this.jobs.map((j) => j.id)));
    const faces = this.services.store.shared?.faces;
    /** On a shared cluster: the newest occurrence each job had on any hall (the cluster fired it while this hall was away). */
    const clusterSlots = new Map<string, number>();
    for (const job of this.jobs) {
      const found = this.records.get(job.id);
      // A job seen for the first time has missed nothing; from now on, a hall that is down misses its slots.
      let record = found ?? newCronRecord(now);
      if (record.pending) {
        const mission = record.pending.mission_id;
        let where = missionWhereabouts(this.services.store.state, mission);
        // The mission may wait in the cluster's queue or run on another hall.
        if (where === null && faces && (await faces.missionKnown(mission))) where = { where: 'queued' };
        record = resolvePending(record, where, now);
      }
      if (record !== found) this.records.set(job.id, record);
      const last = await faces?.lastCronSlot(job.id);
      if (last !== undefined && last !== null) clusterSlots.set(job.id, last);
    }
    await this.services.store.commit();
    // Kept past stop(): the runs of a stopping hall still end, and their outcomes belong in the records.
    this.services.bus.subscribe({
      filter: 'raider.',
      receive: (event) => {
        if (event.type === 'raider.spawned' || event.type === 'raider.done' || event.type === 'raider.refused') this.noteRunEvent(event);
      },
    });
    for (const job of this.jobs) {
      const record = this.records.get(job.id) ?? newCronRecord(now);
      const actor = createActor(cronJobLogic(job, this.world), {
        id: `cron:${job.id}`,
        input: {
          id: job.id,
          name: job.name,
          spec: { cron: job.cron, ...definedFields({ tz: job.tz }) },
          coalesce: job.coalesce,
          catchUp: job.catch_up,
          after: Math.max(handledUpTo(record), clusterSlots.get(job.id) ?? Number.NEGATIVE_INFINITY),
          maxSleepMs: this.options.maxSleepMs ?? DEFAULT_CRON_RECHECK_MS,
          graceMs: ON_TIME_GRACE_MS,
        },
      });
      actor.on('bus', (e) => this.services.publish(e.event));
      actor.subscribe({ error: (err) => this.services.log(`cron job ${job.id} failed: ${errorMessage(err)}`) });
      this.actors.set(job.id, actor);
      // In `raider hall inspect` and on the dashboard's Tree page, with its statechart.
      this.untrack.push(this.services.trackActor(actor));
      actor.start();
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const actor of this.actors.values()) actor.stop();
    for (const untrack of this.untrack.splice(0)) untrack();
  }

  status(): Record<string, unknown> {
    const jobs: Record<string, unknown> = {};
    for (const job of this.jobs) {
      const snapshot = this.actors.get(job.id)?.getSnapshot();
      const next = snapshot ? nextFireAt(snapshot.context, String(snapshot.value)) : null;
      jobs[job.id] = {
        name: job.name,
        cron: job.cron,
        ...definedFields({ tz: job.tz }),
        coalesce: job.coalesce,
        catch_up: job.catch_up,
        state: snapshot ? String(snapshot.value) : 'stopped',
        next: next === null ? null : new Date(next).toISOString(),
        last: this.records.get(job.id)?.last ?? null,
      };
    }
    return { cron: jobs };
  }

  /** A job's last outcome follows its run: started, then how it ended. */
  private noteRunEvent(event: RunEvent): void {
    for (const job of this.jobs) {
      const record = this.records.get(job.id);
      if (!record) continue;
      if (record.pending?.mission_id === event.mission_id) {
        const early = this.world.earlyEvents.get(event.mission_id) ?? [];
        this.world.earlyEvents.set(event.mission_id, [...early, event]);
        return;
      }
      const last = noteRunEvent(record.last, event);
      if (last) {
        this.records.set(job.id, { ...record, last });
        return;
      }
    }
  }
}
