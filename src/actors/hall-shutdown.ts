/**
 * How a hall goes down: the faces stop taking work first, then the hall actor
 * stops its raiders, then what the hall holds is closed in order (socket,
 * permission channels, raider starter, state, pid file, lock) and `stopped`
 * resolves with the process's exit code. A bug in the hall actor takes the
 * same way down after killing every raider, with exit code 70.
 */
import type { WarmBridges } from './warm-bridges.js';
import fs from 'node:fs';
import type { Actor } from 'xstate';
import type { ControlSocket } from '../adapters/control/control-socket.js';
import { liveRuns, type RunRegistry } from '../adapters/control/run-registry.js';
import type { RaiderStarter } from '../adapters/os/fork-server.js';
import type { HallPaths } from '../ports/hall-paths.js';
import type { EventsFileMaker } from '../adapters/storage/events-file-maker.js';
import type { HallStateStore } from '../ports/state-store.js';
import { errorMessage } from '../domain/error-message.js';
import type { hallMachine } from '../machines/hall.machine.js';
import type { HallAdapter } from '../ports/hall-services.js';
import type { HallLock } from './hall-lock.js';
import type { PermissionChannels } from './permission-channels.js';

/** How long the adapters get to stop taking work before the raiders are told to stop. */
const ADAPTER_STOP_MS = 1000;
/** The exit code after a bug in the hall actor, so the service manager restarts us. */
const HALL_BUG_EXIT = 70;

export interface HallHoldings {
  paths: HallPaths;
  lock: HallLock;
  store: HallStateStore;
  socket: ControlSocket;
  raiderStarter: RaiderStarter;
  /** Unused warm bridges end when the hall begins to stop. */
  warmBridges: Pick<WarmBridges, 'close'> | null;
  permissionChannels: PermissionChannels;
  eventsFiles: EventsFileMaker;
  registry: RunRegistry;
  adapters: readonly HallAdapter[];
  log: (line: string) => void;
}

export class HallShutdown {
  /** Resolves when the hall is down, with the exit code for the process. */
  readonly stopped: Promise<number>;
  private resolveStopped: (code: number) => void = () => {};
  private stopping = false;
  private closing = false;

  constructor(
    private readonly actor: Actor<typeof hallMachine>,
    private readonly holdings: HallHoldings,
  ) {
    this.stopped = new Promise<number>((resolve) => (this.resolveStopped = resolve));
    actor.on('hall.stopped', () => void this.close(0));
    actor.subscribe({ error: (err) => this.afterBug(err) });
  }

  /** Begins shutdown (hall.stopping): adapters take no new work first (and write what they still owe); then the hall stops its raiders. */
  begin(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.holdings.warmBridges?.close();
    void this.stopAdapters().then(() => this.actor.send({ type: 'hall.stop' }));
  }

  private async stopAdapters(): Promise<void> {
    const { adapters, log } = this.holdings;
    const adaptersStopped = Promise.allSettled(
      adapters.map((adapter) => adapter.stop().catch((err: unknown) => log(`${adapter.name}: ${errorMessage(err)}`))),
    );
    // An adapter that hangs must not keep the hall from stopping.
    const patience = new Promise((resolve) => setTimeout(resolve, ADAPTER_STOP_MS).unref());
    await Promise.race([adaptersStopped, patience]);
  }

  private async close(code: number): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const { socket, permissionChannels, raiderStarter, eventsFiles, store, paths, lock, log } = this.holdings;
    await socket.close().catch(() => {});
    permissionChannels.closeAll();
    this.holdings.warmBridges?.close();
    await raiderStarter.close();
    eventsFiles.close();
    await store.close().catch((err: unknown) => log(`cannot write the final state: ${errorMessage(err)}`));
    removePidFile(paths);
    await lock.release();
    this.resolveStopped(code);
  }

  /** A bug in the hall: leave no raider behind, close what the hall holds, and report it through `stopped`. */
  private afterBug(err: unknown): void {
    this.holdings.log(`hall actor failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    for (const run of liveRuns(this.holdings.registry)) {
      try {
        process.kill(-run.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    void this.stopAdapters().then(() => this.close(HALL_BUG_EXIT));
  }
}

/** Removes the pid file if it is still ours. */
export function removePidFile(paths: HallPaths): void {
  try {
    if (fs.readFileSync(paths.pidFile, 'utf8').trim() === String(process.pid)) fs.rmSync(paths.pidFile, { force: true });
  } catch {
    /* already gone */
  }
}
