/**
 * The cluster as the dashboard shows it, when several halls share one
 * database (`cluster_mode: shared`): every hall with its lease and its
 * runs' count, and the runs of the other halls, each naming its hall. A hall
 * on files, or alone on its database, has no cluster to show: `shared` is
 * false and the page adds nothing.
 */
import type { ClusterHall, SharedQueue } from '../../ports/cluster-queue.js';
import type { RunRow } from './run-history.js';
import { definedFields } from '../../domain/defined-fields.js';

export interface ClusterReply {
  /** True when several halls may serve this hall's cluster. */
  shared: boolean;
  /** This hall's id in the cluster; null when not shared. */
  hall: string | null;
  halls: ClusterHall[];
}

export async function clusterReply(shared: SharedQueue | undefined): Promise<ClusterReply> {
  if (!shared) return { shared: false, hall: null, halls: [] };
  return { shared: true, hall: shared.hallId, halls: await shared.halls() };
}

/** The runs with a raider on the other halls, as rows of the Runs table. */
export async function remoteRunRows(shared: SharedQueue, now: number = Date.now()): Promise<RunRow[]> {
  return (await shared.remoteRuns()).map(({ hall, run }) => ({
    id: run.id,
    slot: run.slot,
    status: 'running',
    started_at: Math.min(run.started_at, now),
    duration: null,
    mission: run.entry.mission,
    ...definedFields({ pid: run.pid }),
    hall,
  }));
}
