/**
 * What every part of the cluster protocol (docs/cluster.md) is given: the
 * pool, the cluster it speaks for, and the hall it speaks as.
 */
import type pg from 'pg';
import { z } from 'zod';

export interface ClusterScope {
  readonly pool: pg.Pool;
  readonly cluster: string;
  readonly hallId: string;
  readonly warn: (line: string) => void;
}

/** The cluster's NOTIFY channel (a channel name is an identifier: quoted where it is used). */
export function clusterChannel(cluster: string): string {
  return `raider_hall:${cluster}`;
}

/** A row of `raider_hall_runs` read with the hall that holds it (a lost run, a remote run). */
export const heldRunRow = z.object({ hall: z.string(), record: z.unknown() });
