/**
 * The composition root: loads the config and the durable state, recovers what
 * a previous hall left, builds the actor tree with the real OS-facing actors,
 * and wires the adapters (state store, event bus, run registry, control
 * socket) to it. Data flows one way: adapters send events to the hall actor,
 * the hall decides, and what it emits is carried out here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import { type HallConfig } from '../adapters/config/hall-config.js';
import { loadHallConfig } from '../adapters/config/load-hall-config.js';
import { providerStorePath, readProviderStore } from '../adapters/config/provider-store.js';
import { ControlSocket } from '../adapters/control/control-socket.js';
import { EventBus, type Envelope } from '../adapters/control/event-bus.js';
import { HallQueries } from '../adapters/control/queries.js';
import { ActorInspection } from '../adapters/inspect/actor-inspection.js';
import { createRunRegistry, liveRuns } from '../adapters/control/run-registry.js';
import { writeFileAtomic } from '../adapters/storage/atomic-file.js';
import { hallPaths, type HallPaths } from '../adapters/storage/hall-paths.js';
import { newMissionId } from '../adapters/storage/mission-id.js';
import { EventsRetention } from '../adapters/storage/events-retention.js';
import type { HallStateStore } from '../adapters/storage/state-store.js';
import { laterCursor, parseRunId } from '../domain/run-id.js';
import { hallWithRunActors } from '../machines/hall-tree.js';
import { commandService, type CommandHandlers } from '../protocol/command-service.js';
import type { hallMachine, HallInput } from '../machines/hall.machine.js';
import { RAIDER_VERSION } from '../raider/version.js';
import type { HallAdapter, HallAdapterFactory, HallStartFlags } from '../ports/hall-services.js';
import { HallStartError } from '../ports/hall-start-error.js';
import { acquireHallLock, type HallLock } from './hall-lock.js';
import { PermissionChannels } from './permission-channels.js';
import { HallGateway } from './hall-gateway.js';
import { prepareRunLogic } from './prepare-run.actor.js';
import { raiderProcessLogic } from './raider-process.actor.js';
import { ForkServer } from '../adapters/os/fork-server.js';
import { reapRunLogic } from './reap-run.actor.js';
import { resolveRaiderCommand } from './raider-command.js';
import { recoverRuns } from './run-recovery.js';
import { socketAnswers } from '../adapters/os/unix-socket.js';
import { SocketPathError } from '../adapters/os/socket-path.js';
import { openStateStore } from './open-state-store.js';

/** The hall gives its raiders this long to end after SIGTERM when it stops. */
export const SHUTDOWN_GRACE_MS = 5000;
/** How long the adapters get to stop taking work before the raiders are told to stop. */
const ADAPTER_STOP_MS = 1000;

export { HallStartError };

export interface HallStartOptions {
  root: string;
  /** The optional faces to start (cron, Telegram, ACP, MCP); each decides from the config whether it runs. */
  adapters?: readonly HallAdapterFactory[];
  env?: Readonly<Record<string, string | undefined>>;
  /** What the command line asked for (`--acp-port`); it wins over the environment and the config. */
  flags?: HallStartFlags;
  /** The hall's diagnostics (config warnings, storage problems). */
  log?: (line: string) => void;
  /** Every event-bus event, for the foreground view. */
  onEvent?: (event: Envelope) => void;
  /** An XState inspection observer (the Stately inspector of `start --inspect`). */
  inspect?: InspectionObserver;
}

export type InspectionObserver = (event: InspectionEvent) => void;

export interface RunningHall {
  paths: HallPaths;
  config: HallConfig;
  bus: EventBus;
  actor: Actor<typeof hallMachine>;
  /** The faces (adapters) that could not start, by name: why. */
  faceErrors: Readonly<Record<string, string>>;
  /** Begins shutdown (hall.stopping); `stopped` resolves when it is over. */
  stop(): void;
  /** Resolves when the hall is down, with the exit code for the process: 0, or 70 after a bug in the hall actor. */
  stopped: Promise<number>;
}

export async function startHall(options: HallStartOptions): Promise<RunningHall> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const paths = hallPaths(options.root);
  if (!fs.statSync(paths.root, { throwIfNoEntry: false })?.isDirectory()) {
    throw new HallStartError(`Not a directory: ${paths.root}`, 1);
  }

  const loaded = loadHallConfig(paths.root);
  if (!loaded.ok) throw new HallStartError(loaded.errors.join('\n'), 3);
  for (const warning of loaded.warnings) log(warning);
  const config = loaded.config;

  const lock = await acquireHallLock(paths.root);
  if (!lock) throw new HallStartError(alreadyRunning(paths), 1);
  try {
    return await startLocked(paths, config, lock, env, log, options);
  } catch (err) {
    await lock.release();
    throw err;
  }
}

function alreadyRunning(paths: HallPaths): string {
  const pid = fs.existsSync(paths.pidFile) ? fs.readFileSync(paths.pidFile, 'utf8').trim() : '';
  return /^\d+$/.test(pid) ? `Hall already running with PID ${pid}` : `Hall already running in ${paths.root}`;
}


async function startLocked(
  paths: HallPaths,
  config: HallConfig,
  lock: HallLock,
  env: Readonly<Record<string, string | undefined>>,
  log: (line: string) => void,
  options: HallStartOptions,
): Promise<RunningHall> {
  const { onEvent, inspect } = options;
  const adapterFactories = options.adapters ?? [];
  if (fs.existsSync(paths.socket)) {
    // Our lock is free, but another implementation (a Perl hall) may still answer here.
    if (await socketAnswers(paths.socket)) throw new HallStartError(`Hall already running: ${paths.socket} answers`, 1);
    fs.rmSync(paths.socket, { force: true });
  }
  fs.mkdirSync(paths.logsDir, { recursive: true });
  const store = await openStateStore(config, paths, env, log);
  forgetStartupBindings(store, config);
  await store.checkpoint();
  const raider = resolveRaiderCommand(env);
  const { adopted, ended } = await recoverRuns([...store.state.runs.values()]);

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
  };

  const libTarget = path.resolve(paths.root, config.preferred_lib_target ?? '.raider/lib');
  const permissionChannels = new PermissionChannels(permissionChannelDir(paths), log);
  const home = env.HOME;
  const forkServer = new ForkServer(log);
  const logic = hallWithRunActors({
    prepareRun: prepareRunLogic({
      paths,
      config,
      store,
      raider,
      baseEnv: env,
      libTarget,
      providerStore: () => readProviderStore(providerStorePath(home)),
      raiderVersion: RAIDER_VERSION,
      permissionChannels,
      warn: log,
    }),
    raiderProcess: raiderProcessLogic(forkServer),
    reapRun: reapRunLogic,
  });
  const actor = createActor(logic, { id: 'hall', input, ...(inspect ? { inspect } : {}) });
  const bus = new EventBus(log);
  const inspection = new ActorInspection(bus);
  inspection.track(actor);
  const registry = createRunRegistry();

  actor.on('store', (e) => store.apply(e.op));
  actor.on('bus', (e) => {
    const envelope = bus.publish(e.event);
    onEvent?.(envelope);
    if (e.event.type === 'raider.done') permissionChannels.close(String(e.event.id));
  });
  actor.on('registry.runStarted', (e) => {
    registry.trigger.runStarted({ run: e.run });
    retention.started(e.run.id);
  });
  actor.on('registry.runEnded', (e) => {
    const run = registry.getSnapshot().context.runs.get(e.runId);
    registry.trigger.runEnded({ runId: e.runId });
    if (run) retention.ended(run.slot, (id) => registry.getSnapshot().context.runs.has(id));
  });



  const gateway = new HallGateway(actor, store);
  const queries = new HallQueries(paths, registry, store);
  const adapters: HallAdapter[] = [];
  for (const factory of adapterFactories) {
    const adapter = await factory({
      paths,
      config,
      env,
      flags: options.flags ?? {},
      bus,
      store,
      queries,
      request: (command) => gateway.request(command),
      command: (cmd, payload) => commandService(commands)(cmd, payload),
      publish: (event) => {
        const envelope = bus.publish(event);
        onEvent?.(envelope);
      },
      newMissionId: () => newMissionId(),
      permissionChannels,
      trackActor: (root) => inspection.track(root),
      ...(inspect ? { inspect } : {}),
      log,
    });
    if (adapter) adapters.push(adapter);
  }
  for (const adapter of adapters) if (adapter.status) queries.addStatusSection(() => adapter.status!());

  const commands: CommandHandlers = {
    spawn: (p) =>
      gateway.request({
        type: 'cmd.spawn',
        missionId: newMissionId(),
        name: p.name,
        mission: p.mission,
        ...(p.binding !== undefined ? { binding: p.binding } : {}),
        at: Date.now(),
      }),
    ps: () => queries.ps(),
    status: () => queries.status(),
    attach: (p) => queries.attach(p.id),
    queue: (p) => queries.queue(p.slot),
    sessions: () => queries.sessions(),
    logs: (p) => queries.logs(p.id),
    kill: (p) => gateway.request({ type: 'cmd.kill', id: p.id }),
    cancel: (p) => gateway.request({ type: 'cmd.cancel', id: p.id }),
    session_reset: (p) => gateway.request({ type: 'cmd.sessionReset', binding: p.binding }),
    telegram_reply: () => ({ error: 'telegram not configured in .raider-hall.yml' }),
  };
  for (const adapter of adapters) Object.assign(commands, adapter.commands ?? {});
  const socket = new ControlSocket({ socketPath: paths.socket, commands, bus, warn: log });

  const stopAdapters = async (): Promise<void> => {
    const adaptersStopped = Promise.allSettled(
      adapters.map((adapter) => adapter.stop().catch((err: Error) => log(`${adapter.name}: ${err.message}`))),
    );
    // An adapter that hangs must not keep the hall from stopping.
    const patience = new Promise((resolve) => setTimeout(resolve, ADAPTER_STOP_MS).unref());
    await Promise.race([adaptersStopped, patience]);
  };
  let resolveStopped: (code: number) => void = () => {};
  const stopped = new Promise<number>((resolve) => (resolveStopped = resolve));
  let shuttingDown = false;
  const shutDown = async (code: number): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    await socket.close().catch(() => {});
    permissionChannels.closeAll();
    await forkServer.close();
    await store.close().catch((err: Error) => log(`cannot write the final state: ${err.message}`));
    removePidFile(paths);
    await lock.release();
    resolveStopped(code);
  };
  actor.on('hall.stopped', () => void shutDown(0));
  actor.subscribe({
    error: (err) => {
      // A bug in the hall: leave no raider behind, close what the hall holds, and report
      // exit code 70 through `stopped`, so the service manager restarts us.
      log(`hall actor failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      for (const run of liveRuns(registry)) {
        try {
          process.kill(-run.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      void stopAdapters().then(() => shutDown(70));
    },
  });

  // The pid file first: whoever sees the socket answer can find the hall's pid. Then the boot:
  // what a previous hall left waiting is handed out before any client can send a new mission.
  await writeFileAtomic(paths.pidFile, `${process.pid}\n`);
  forkServer.start();
  actor.start();
  actor.send({ type: 'hall.boot', at: Date.now() });
  try {
    await socket.listen();
  } catch (err) {
    actor.stop();
    await forkServer.close();
    removePidFile(paths);
    // No place for the socket is a matter of how this machine is set up, like a config error.
    throw err instanceof SocketPathError ? new HallStartError(`Cannot serve ${paths.socket}: ${err.message}`, 3) : err;
  }
  // A face that cannot serve leaves the others serving; the hall says which, here and in status.
  const faceErrors: Record<string, string> = {};
  for (const adapter of adapters) {
    await adapter.start().catch((err: unknown) => {
      faceErrors[adapter.name] = err instanceof Error ? err.message : String(err);
      log(`${adapter.name}: cannot serve: ${faceErrors[adapter.name]}`);
    });
  }
  if (Object.keys(faceErrors).length > 0) queries.addStatusSection(() => ({ face_errors: faceErrors }));

  let stopping = false;
  return {
    paths,
    config,
    bus,
    actor,
    faceErrors,
    stop: () => {
      if (stopping) return;
      stopping = true;
      // Adapters take no new work first (and write what they still owe); then the hall stops its raiders.
      void stopAdapters().then(() => actor.send({ type: 'hall.stop' }));
    },
    stopped,
  };
}

/**
 * A hall start forgets ACP bindings (their clients are gone) and the bindings
 * of cron jobs no longer configured, and drops the missions they left waiting.
 */
function forgetStartupBindings(store: HallStateStore, config: HallConfig): void {
  const cronIds = new Set(config.cron.map((job) => job.id));
  const stale = (binding: string | undefined) =>
    binding !== undefined && (binding.startsWith('acp:') || (binding.startsWith('cron:') && !cronIds.has(binding.slice(5))));
  for (const binding of [...store.state.sessions.keys()]) if (stale(binding)) store.apply({ op: 'unbind', binding });
  const waiting = [...store.state.slotQueues.values(), ...store.state.bindingQueues.values()].flat();
  for (const entry of waiting) if (stale(entry.binding)) store.apply({ op: 'remove', missionId: entry.id });
}

/** Where per-run permission sockets live (a root too long for them gets links to a runtime directory). */
function permissionChannelDir(paths: HallPaths): string {
  return path.join(paths.root, '.raider-hall', 'perm');
}

function removePidFile(paths: HallPaths): void {
  try {
    if (fs.readFileSync(paths.pidFile, 'utf8').trim() === String(process.pid)) fs.rmSync(paths.pidFile, { force: true });
  } catch {
    /* already gone */
  }
}
