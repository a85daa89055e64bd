/**
 * The shared cluster's queue on PostgreSQL (docs/cluster.md, "Several halls
 * on one cluster"): missions submitted by any hall wait in
 * `raider_hall_missions`; a hall claims the heads of their queues with
 * `FOR UPDATE SKIP LOCKED` while it has room; a hall whose lease expired is
 * taken over in one transaction. NOTIFY on the cluster's channel is the
 * doorbell; the callers also poll, as a notification sent while a listener
 * was reconnecting is lost.
 *
 * This class is the protocol's one face for the rest of the hall; each part
 * of it, with its SQL, is a file of `cluster/`: submit, claim, rescue,
 * events (the relay), halls (membership), waiting, remote (runs and
 * signals) and doorbell (LISTEN).
 */
import type pg from 'pg';
import { z } from 'zod';
import type { Mission } from '../../../domain/mission.js';
import type { BusEvent } from '../../../machines/hall-effects.js';
import type {
  ClaimedMission,
  ClusterEvent,
  ClusterHall,
  LostRun,
  QueuedMission,
  RemoteRun,
  RemoteSignal,
  SharedQueue,
} from '../../../ports/cluster-queue.js';
import type { PostgresRunOutputs } from './run-outputs.js';
import type { PostgresJournals } from './journal-sync.js';
import { PostgresClusterFaces } from './postgres-cluster-faces.js';
import { PostgresClusterQuestions } from './postgres-cluster-questions.js';
import { claimMissions, pruneRunIds } from './cluster/claim.js';
import { ClusterDoorbell } from './cluster/doorbell.js';
import { eventsSince, pruneEvents, shareEvents } from './cluster/events.js';
import { clusterHalls } from './cluster/halls.js';
import { remoteRun, remoteRuns, sendSignal, takeSignals } from './cluster/remote.js';
import { rescueLostHalls, stillHeld } from './cluster/rescue.js';
import { type ClusterScope, clusterChannel } from './cluster/scope.js';
import { ClusterSubmissions } from './cluster/submit.js';
import { frontMission, queuedMissions } from './cluster/waiting.js';

export { RELEASE_CLAIMS } from './cluster/rescue.js';

const sessionRow = z.object({ session: z.string() });

export class PostgresSharedQueue implements SharedQueue {
  private readonly scope: ClusterScope;
  private readonly submissions: ClusterSubmissions;
  private readonly doorbell: ClusterDoorbell;
  private replacedListeners: Array<() => void> = [];
  private refusedListeners: Array<(runIds: readonly string[]) => void> = [];
  readonly faces: PostgresClusterFaces;
  readonly questions: PostgresClusterQuestions;

  constructor(
    pool: pg.Pool,
    connection: pg.ClientConfig,
    cluster: string,
    readonly hallId: string,
    readonly journals: PostgresJournals,
    readonly outputs: PostgresRunOutputs,
    warn: (line: string) => void,
  ) {
    this.scope = { pool, cluster, hallId, warn };
    this.submissions = new ClusterSubmissions(this.scope);
    this.doorbell = new ClusterDoorbell(connection, cluster);
    this.faces = new PostgresClusterFaces(pool, cluster, hallId);
    this.questions = new PostgresClusterQuestions(pool, cluster, hallId, clusterChannel(cluster));
  }

  /** The cluster's NOTIFY channel (a channel name is an identifier: quoted where it is used). */
  static channel(cluster: string): string {
    return clusterChannel(cluster);
  }

  /**
   * Queues the mission in the cluster; resolves once its row is committed. Missions submitted while a
   * batch is on its way go together in the next one (group commit).
   */
  submit(entry: Mission): Promise<{ depth: number }> {
    return this.submissions.submit(entry);
  }

  async sessionOf(binding: string): Promise<string | null> {
    const result = await this.scope.pool.query('SELECT session FROM raider_hall_sessions WHERE cluster = $1 AND binding = $2', [
      this.scope.cluster,
      binding,
    ]);
    const row = sessionRow.safeParse(result.rows[0]);
    return row.success ? row.data.session : null;
  }

  claim(limit: number): Promise<ClaimedMission[]> {
    return claimMissions(this.scope, limit);
  }

  rescue(report: (lost: LostRun) => BusEvent): Promise<LostRun[]> {
    return rescueLostHalls(this.scope, report);
  }

  shareEvents(events: readonly BusEvent[]): Promise<void> {
    return shareEvents(this.scope, events);
  }

  eventsSince(afterId: number | null): Promise<{ last: number; events: ClusterEvent[] }> {
    return eventsSince(this.scope, afterId);
  }

  /** Drops the events every hall has had time to relay, and other rows no hall needs any more. */
  async pruneEvents(): Promise<void> {
    await pruneEvents(this.scope);
    await pruneRunIds(this.scope);
    await this.faces.prune();
    await this.outputs.prune();
    await this.journals.prune();
    await this.questions.prune();
  }

  halls(): Promise<ClusterHall[]> {
    return clusterHalls(this.scope);
  }

  queued(): Promise<QueuedMission[]> {
    return queuedMissions(this.scope);
  }

  remoteRuns(): Promise<RemoteRun[]> {
    return remoteRuns(this.scope);
  }

  remoteRun(id: string): Promise<RemoteRun | null> {
    return remoteRun(this.scope, id);
  }

  signal(id: string, signal: 'cancel' | 'kill'): Promise<RemoteSignal> {
    return sendSignal(this.scope, id, signal);
  }

  front(id: string): Promise<{ entry: Mission; binding?: string; from: number } | null> {
    return frontMission(this.scope, id);
  }

  takeSignals(): Promise<Array<{ runId: string; signal: 'cancel' | 'kill' }>> {
    return takeSignals(this.scope);
  }

  stillHeld(runIds: readonly string[]): Promise<Set<string>> {
    return stillHeld(this.scope, runIds);
  }

  onDoorbell(listener: () => void): void {
    this.doorbell.onRing(listener);
  }

  onReplaced(listener: () => void): void {
    this.replacedListeners.push(listener);
  }

  /** The store found this hall's lease gone at a renewal. */
  replaced(): void {
    for (const listener of this.replacedListeners) listener();
  }

  onRunsRefused(listener: (runIds: readonly string[]) => void): void {
    this.refusedListeners.push(listener);
  }

  /** The store's commit found these runs' claims gone: told before the runs hear that their records are written. */
  runsRefused(runIds: readonly string[]): void {
    for (const listener of this.refusedListeners) listener(runIds);
  }

  close(): Promise<void> {
    return this.doorbell.close();
  }
}
