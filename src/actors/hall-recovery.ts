/**
 * What a starting hall makes of what the previous one left: the durable state
 * loaded, the bindings whose clients are gone forgotten, the runs it left
 * adopted or reported, the git worktrees it made reconciled, and the run-id cursors kept, all as the hall actor's
 * input.
 */
import type { HallConfig } from '../ports/hall-config.js';
import { EventsRetention } from '../adapters/storage/events-retention.js';
import type { HallPaths } from '../ports/hall-paths.js';
import type { DurableOp } from '../ports/durable-state.js';
import type { HallStateStore } from '../ports/state-store.js';
import { laterCursor, parseRunId } from '../domain/run-id.js';
import type { HallInput } from '../machines/hall.machine.js';
import { openStateStore } from './open-state-store.js';
import { recoverRuns } from './run-recovery.js';
import { reconcileWorktrees } from './worktree-reconcile.js';

/** The hall gives its raiders this long to end after SIGTERM when it stops. */
export const SHUTDOWN_GRACE_MS = 5000;

export interface RecoveredHall {
  store: HallStateStore;
  /** Keeps each slot's events files to `logs.keep_events`; it knows the run ids already used. */
  retention: EventsRetention;
  input: HallInput;
}

export async function recoverHall(
  paths: HallPaths,
  config: HallConfig,
  env: Readonly<Record<string, string | undefined>>,
  log: (line: string) => void,
): Promise<RecoveredHall> {
  const store = await openStateStore(config, paths, env, log);
  // In a shared cluster the bindings are the cluster's: another hall may serve them now.
  // Only when that dropped something: after a clean stop the files already hold everything (megabytes for a long queue).
  if (!store.shared && forgetStartupBindings(store, config)) await store.checkpoint();
  const { adopted, ended } = await recoverRuns([...store.state.runs.values()]);
  const live = new Set(adopted.flatMap((run) => (run.worktree !== undefined ? [run.worktree.path] : [])));
  await reconcileWorktrees(paths, config, store, live, log);

  const retention = new EventsRetention(paths.logsDir, config.logs.keep_events, log);
  const cursors = retention.load();
  for (const id of store.state.runs.keys()) {
    const parsed = parseRunId(id);
    if (parsed) cursors[parsed.slot] = laterCursor(cursors[parsed.slot], parsed.cursor);
  }
  const input: HallInput = {
    root: paths.root,
    graceMs: Math.round(config.cancel_grace * 1000),
    shutdownGraceMs: SHUTDOWN_GRACE_MS,
    slotQueues: Object.fromEntries([...store.state.slotQueues].map(([slot, q]) => [slot, [...q]])),
    bindingQueues: Object.fromEntries([...store.state.bindingQueues].map(([b, q]) => [b, [...q]])),
    sessions: Object.fromEntries(store.state.sessions),
    runIdCursors: cursors,
    adopted,
    ended,
    ...(config.max_running !== null ? { maxRunning: config.max_running } : {}),
  };
  return { store, retention, input };
}

/**
 * A hall start forgets ACP bindings (their clients are gone) and the bindings
 * of cron jobs no longer configured, and drops the missions they left waiting;
 * true when there was any.
 */
function forgetStartupBindings(store: HallStateStore, config: HallConfig): boolean {
  const cronIds = new Set(config.cron.map((job) => job.id));
  const stale = (binding: string | undefined) =>
    binding !== undefined && (binding.startsWith('acp:') || (binding.startsWith('cron:') && !cronIds.has(binding.slice(5))));
  const ops: DurableOp[] = [];
  for (const binding of store.state.sessions.keys()) if (stale(binding)) ops.push({ op: 'unbind', binding });
  for (const queue of [...store.state.slotQueues.values(), ...store.state.bindingQueues.values()]) {
    for (const entry of queue) if (stale(entry.binding)) ops.push({ op: 'remove', missionId: entry.id });
  }
  for (const op of ops) store.apply(op);
  return ops.length > 0;
}
