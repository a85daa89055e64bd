/**
 * The composition root: loads the config, takes the hall's lock, and wires
 * the parts that each do one job: recovery (hall-recovery.ts) builds the
 * hall actor's input, the real OS-facing actors run its runs, effect routing
 * (hall-effect-routing.ts) carries out what it emits, the command table
 * (hall-commands.ts) and the faces feed it, and shutdown (hall-shutdown.ts)
 * takes it all down. Data flows one way: adapters send events to the hall
 * actor, the hall decides, and what it emits is carried out.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import type { HallConfig } from '../ports/hall-config.js';
import { loadHallConfig } from '../adapters/config/load-hall-config.js';
import { providerStorePath, readProviderStore } from '../adapters/config/provider-store.js';
import { ControlSocket } from '../adapters/control/control-socket.js';
import { EventBus } from '../adapters/control/event-bus.js';
import type { Envelope } from '../ports/bus.js';
import { parseRunId } from '../domain/run-id.js';
import { definedFields } from '../domain/defined-fields.js';
import { HallQueries } from '../adapters/control/queries.js';
import { DroppedMissions } from '../adapters/control/whereabouts.js';
import { createRunRegistry } from '../adapters/control/run-registry.js';
import { ActorInspection } from '../adapters/inspect/actor-inspection.js';
import { ForkServer, type RaiderStarter } from '../adapters/os/fork-server.js';
import { HallSpawner, hallRaiderStarter } from '../adapters/os/hall-spawner.js';
import { WarmBridges, warmEntries } from './warm-bridges.js';
import { SocketPathError } from '../os/socket-path.js';
import { socketAnswers } from '../adapters/os/unix-socket.js';
import { writeFileAtomic } from '../adapters/storage/atomic-file.js';
import { EventsFileMaker } from '../adapters/storage/events-file-maker.js';
import { hallPaths, type HallPaths } from '../ports/hall-paths.js';
import { newMissionId } from '../adapters/storage/mission-id.js';
import { hallWithRunActors } from '../machines/hall-tree.js';
import type { hallMachine } from '../machines/hall.machine.js';
import type { BusEvent } from '../machines/hall-effects.js';
import type { HallAdapter, HallAdapterFactory, HallStartFlags } from '../ports/hall-services.js';
import { HallStartError } from '../ports/hall-start-error.js';
import { commandService } from '../protocol/command-service.js';
import { RAIDER_VERSION } from '../protocol/raider-version.js';
import { addFaceCommands, hallCommands } from './hall-commands.js';
import { worktreeAdmin, worktreeHandlers } from '../adapters/os/worktree-admin.js';
import { routeHallEffects } from './hall-effect-routing.js';
import { ClusterPermissions } from './cluster-permissions.js';
import { ClusterWorker } from './cluster-worker.js';
import { HallGateway } from './hall-gateway.js';
import { acquireHallLock, type HallLock } from './hall-lock.js';
import { recoverHall } from './hall-recovery.js';
import { HallShutdown, removePidFile } from './hall-shutdown.js';
import { QuestionDesk } from '../adapters/dashboard/question-desk.js';
import { PermissionChannels } from './permission-channels.js';
import { prepareRunLogic } from './prepare-run.actor.js';
import { raiderProcessLogic } from './raider-process.actor.js';
import { recordWritten } from './record-written.js';
import { reapRunLogic, settleWorktreeLogic } from './reap-run.actor.js';
import { BindingWorktrees } from '../adapters/storage/binding-worktrees.js';
import { RunOutputMirror } from './run-output-mirror.js';
import { RunOutputShipper } from './run-output-shipper.js';
import { resolveAcpBridgeCommand, resolveHallMcpCommand, resolveRaiderCommand } from './raider-command.js';
import { errorMessage } from '../domain/error-message.js';
import { noEntryNotice, slotOf } from '../domain/names.js';
import { ownEntry } from '../domain/own-entry.js';

export { SHUTDOWN_GRACE_MS } from './hall-recovery.js';
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
  if (fs.existsSync(paths.socket)) {
    // Our lock is free, but another implementation of the hall, which does not take it, may still answer here.
    if (await socketAnswers(paths.socket)) throw new HallStartError(`Hall already running: ${paths.socket} answers`, 1);
    fs.rmSync(paths.socket, { force: true });
  }
  fs.mkdirSync(paths.logsDir, { recursive: true });
  const { store, retention, input } = await recoverHall(paths, config, env, log);

  const clusterPermissions = store.shared
    ? new ClusterPermissions(
        store.shared.questions,
        (listener) => store.shared?.onDoorbell(listener),
        config.permission_timeout * 1000,
        log,
      )
    : null;
  const permissionChannels = new PermissionChannels(permissionChannelDir(paths), log, clusterPermissions);
  const raiderStarter = hallRaiderStarter(env, log, () => new ForkServer(log));
  const warmBridges = startWarmBridges(paths, config, env, raiderStarter, log);
  const eventsFiles = new EventsFileMaker(paths.logsDir);
  const bus = new EventBus(log);
  // On a shared cluster every event names its hall.
  if (store.shared) bus.nameHall(store.shared.hallId);
  // A cancel of a mission that was dropped says so, not "not found": the hall's drops and the cluster's.
  const dropped = new DroppedMissions();
  const publish = (event: BusEvent): void => {
    const envelope = bus.publish(event);
    onEvent?.(envelope);
    dropped.noteEvent(event);
  };
  const logic = hallWithRunActors({
    prepareRun: prepareRunLogic({
      paths,
      config,
      raider: resolveRaiderCommand(env),
      acpBridge: resolveAcpBridgeCommand(env),
      hallMcp: resolveHallMcpCommand(env),
      baseEnv: env,
      libTarget: path.resolve(paths.root, config.preferred_lib_target ?? '.raider/lib'),
      providerStore: () => readProviderStore(providerStorePath(env.HOME)),
      raiderVersion: RAIDER_VERSION,
      permissionChannels,
      kept: (ns, key) => store.state.get(ns, key),
      eventsFiles,
      bindingWorktrees: new BindingWorktrees(store),
      ...(warmBridges !== null ? { warmBridges } : {}),
      warn: log,
    }),
    raiderProcess: raiderProcessLogic(
      raiderStarter,
      recordWritten(store),
      (id, pid, signal) => publish({ type: 'raider.signal', id, slot: parseRunId(id)?.slot ?? id, pid, signal }),
      warmBridges ?? undefined,
    ),
    reapRun: reapRunLogic,
    settleWorktree: settleWorktreeLogic,
  });
  const actor = createActor(logic, { id: 'hall', input, ...(inspect ? { inspect } : {}) });
  const inspection = new ActorInspection(bus);
  inspection.track(actor);
  const registry = createRunRegistry();
  // Runs nobody registered for ask the desk, when a face (dashboard, Telegram) covers their binding.
  const questions = new QuestionDesk(
    { publish, log, trackActor: (root) => inspection.track(root), ...(inspect ? { inspect } : {}) },
    config.permission_timeout * 1000,
  );
  permissionChannels.setDefault(questions.ask, questions.covers);
  routeHallEffects(actor, { store, bus, registry, retention, permissionChannels, warmBridges: warmBridges ?? undefined, onEvent });
  actor.on('bus', (e) => dropped.noteEvent(e.event));

  const spawnNotice = (name: string) => (ownEntry(config.raiders, slotOf(name).baseName) === undefined ? noEntryNotice(name) : undefined);
  const gateway = new HallGateway(actor, store, spawnNotice, publish);
  const output = store.shared
    ? {
        shipper: new RunOutputShipper(store.shared.outputs, paths, store.state, log),
        mirror: new RunOutputMirror(store.shared, path.join(paths.root, '.raider-hall', 'cluster'), log),
      }
    : null;
  const cluster =
    store.shared && output ? new ClusterWorker(actor, store.shared, store, config.max_running, bus, log, output, paths.root) : null;
  const queries = new HallQueries(paths, registry, store, dropped);
  const commands = hallCommands(
    gateway,
    queries,
    worktreeHandlers(() => worktreeAdmin(paths, config)),
    store.shared && output
      ? {
          queue: store.shared,
          mirror: output.mirror,
          publish,
          learnSession: (binding, session) => actor.send({ type: 'cluster.session', binding, ...definedFields({ session }) }),
        }
      : undefined,
  );
  const runCommand = commandService(commands);
  const adapters: HallAdapter[] = [];
  for (const factory of options.adapters ?? []) {
    const adapter = await factory({
      paths,
      config,
      env,
      flags: options.flags ?? {},
      bus,
      store,
      queries,
      request: (command) => gateway.request(command),
      command: (cmd, payload) => runCommand(cmd, payload),
      publish,
      newMissionId: () => newMissionId(),
      permissionChannels,
      questions,
      trackActor: (root) => inspection.track(root),
      actors: inspection,
      onEventsPruned: (listener) => retention.onPruned(listener),
      ...(inspect ? { inspect } : {}),
      log,
    });
    if (adapter) adapters.push(adapter);
  }
  for (const adapter of adapters) {
    const status = adapter.status?.bind(adapter);
    if (status) queries.addStatusSection(status);
  }
  if (warmBridges !== null) queries.addStatusSection(() => warmBridges.status());
  addFaceCommands(commands, adapters);
  const socket = new ControlSocket({ socketPath: paths.socket, commands, bus, warn: log });
  actor.on('hall.stopped', () => cluster?.stop());
  const shutdown = new HallShutdown(actor, {
    paths,
    lock,
    store,
    socket,
    raiderStarter,
    warmBridges,
    eventsFiles,
    permissionChannels,
    registry,
    adapters,
    log,
  });

  // The pid file first: whoever sees the socket answer can find the hall's pid. Then the boot:
  // what a previous hall left waiting is handed out before any client can send a new mission.
  await writeFileAtomic(paths.pidFile, `${process.pid}\n`);
  raiderStarter.start();
  cluster?.shareOwnEvents();
  actor.start();
  actor.send({ type: 'hall.boot', at: Date.now() });
  // Claims start after the boot: this hall's own adopted runs hold their room first.
  cluster?.start();
  warmBridges?.start();
  try {
    await socket.listen();
  } catch (err) {
    actor.stop();
    warmBridges?.close();
    await raiderStarter.close();
    removePidFile(paths);
    // No place for the socket is a matter of how this machine is set up, like a config error.
    throw err instanceof SocketPathError ? new HallStartError(`Cannot serve ${paths.socket}: ${err.message}`, 3) : err;
  }
  const faceErrors = await startFaces(adapters, log);
  if (Object.keys(faceErrors).length > 0) queries.addStatusSection(() => ({ face_errors: faceErrors }));

  return { paths, config, bus, actor, faceErrors, stop: () => shutdown.begin(), stopped: shutdown.stopped };
}

/**
 * The warm ACP bridges of the entries that keep some (docs/agents.md, "Warm
 * bridges"), or null when none does. They need the hall's own spawner, which
 * gives a process a stdin socket; behind the fork server every run starts its own bridge.
 */
function startWarmBridges(
  paths: HallPaths,
  config: HallConfig,
  env: Readonly<Record<string, string | undefined>>,
  starter: RaiderStarter,
  log: (line: string) => void,
): WarmBridges | null {
  const entries = warmEntries(config);
  if (entries.length === 0) return null;
  if (!(starter instanceof HallSpawner)) {
    log(
      `acp.keep_warm is not kept (${entries.map((e) => e.entry).join(', ')}): raiders are started through the fork server, which cannot hand a run over`,
    );
    return null;
  }
  return new WarmBridges({
    spawner: starter,
    bridge: resolveAcpBridgeCommand(env),
    baseEnv: env,
    root: paths.root,
    logDir: path.join(paths.root, '.raider-hall', 'warm'),
    entries,
    log,
  });
}

/** A face that cannot serve leaves the others serving; the hall says which, here and in status. */
async function startFaces(adapters: readonly HallAdapter[], log: (line: string) => void): Promise<Record<string, string>> {
  const faceErrors: Record<string, string> = {};
  for (const adapter of adapters) {
    await adapter.start().catch((err: unknown) => {
      faceErrors[adapter.name] = errorMessage(err);
      log(`${adapter.name}: cannot serve: ${faceErrors[adapter.name]}`);
    });
  }
  return faceErrors;
}

/** Where per-run permission sockets live (a root too long for them gets links to a runtime directory). */
function permissionChannelDir(paths: HallPaths): string {
  return path.join(paths.root, '.raider-hall', 'perm');
}
