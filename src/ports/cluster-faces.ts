/**
 * What the cron and Telegram faces of a shared hall ask the cluster, so that
 * each cron occurrence fires on one hall and each bot is polled by one hall
 * at a time (docs/cluster.md). Only the PostgreSQL store offers it, with
 * `cluster_mode: shared`; a hall alone owns every occurrence and every bot.
 */
export interface ClusterFaces {
  /**
   * True when this hall handles `job`'s occurrence at `slotMs`: the first hall
   * to ask wins, and asking again answers the same.
   */
  claimCronSlot(job: string, slotMs: number): Promise<boolean>;
  /** The latest occurrence of `job` a hall of the cluster handled (epoch ms), or null. */
  lastCronSlot(job: string): Promise<number | null>;
  /** True while a mission of `binding` waits in the cluster or runs on one of its halls. */
  bindingBusy(binding: string): Promise<boolean>;
  /** The bindings starting with `prefix` of the missions waiting in the cluster or running on one of its halls. */
  busyBindings(prefix: string): Promise<string[]>;
  /** True while a mission with this id waits in the cluster or runs on one of its halls. */
  missionKnown(missionId: string): Promise<boolean>;
  /**
   * Takes or keeps `role` for this hall: true when this hall holds it now,
   * false while another hall whose lease lives holds it.
   */
  holdRole(role: string): Promise<boolean>;
  /** A fact as the database holds it now (another hall may have written it since this one started). */
  readFact(ns: string, key: string): Promise<unknown>;
  /** Writes a fact only while this hall holds `role`; false when it no longer does (nothing written). */
  writeFactHolding(role: string, ns: string, key: string, value: unknown): Promise<boolean>;
}
