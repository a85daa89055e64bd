/**
 * The cron jobs' durable facts in the hall's state store: namespace `cron`
 * (state/cron.json), one record per job id.
 */
import { readCronRecord, type CronJobRecord } from '../../domain/cron-record.js';
import type { DurableState } from '../../ports/durable-state.js';
import type { HallStateStore } from '../../ports/state-store.js';

export const CRON_NS = 'cron';

export class CronRecords {
  constructor(private readonly store: HallStateStore) {}

  get(jobId: string): CronJobRecord | null {
    return readCronRecord(this.store.state.get(CRON_NS, jobId));
  }

  /** Applies now; durable with the next commit (for facts that may trail, such as a run's end). */
  set(jobId: string, record: CronJobRecord): void {
    this.store.apply({ op: 'set', ns: CRON_NS, key: jobId, value: record });
  }

  /** Applies and waits until the record is on disk. */
  async save(jobId: string, record: CronJobRecord): Promise<void> {
    this.set(jobId, record);
    await this.store.commit();
  }

  /** Drops the records of jobs no longer configured, as the hall forgets their bindings. */
  forgetAllBut(jobIds: ReadonlySet<string>): void {
    for (const key of [...(this.store.state.kv.get(CRON_NS)?.keys() ?? [])]) {
      if (!jobIds.has(key)) this.store.apply({ op: 'unset', ns: CRON_NS, key });
    }
  }
}

/** Where a mission is in the hall's durable state: running (in the run ledger), waiting, or nowhere. */
export function missionWhereabouts(
  state: DurableState,
  missionId: string,
): { where: 'running'; runId: string } | { where: 'queued' } | null {
  for (const run of state.runs.values()) if (run.entry.id === missionId) return { where: 'running', runId: run.id };
  for (const queues of [state.slotQueues, state.bindingQueues]) {
    for (const queue of queues.values()) if (queue.some((m) => m.id === missionId)) return { where: 'queued' };
  }
  return null;
}

/** Every mission the hall still owes a run or an outcome: running ones first, then waiting ones. */
export function* missionsInFlight(state: DurableState): Iterable<{ binding?: string }> {
  for (const run of state.runs.values()) yield run.entry;
  for (const queue of state.slotQueues.values()) yield* queue;
  for (const queue of state.bindingQueues.values()) yield* queue;
}
