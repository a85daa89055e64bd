/**
 * The seam for the hall's optional faces (cron, Telegram, ACP, MCP): each is
 * an adapter built from the hall's services. Adapters turn the world into
 * requests to the hall actor and publish their own events; they never reach
 * into the actor tree. This port lives outside `src/actors` so adapters
 * depend on it, and the composition root implements it, not the other way.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';
import type { HallConfig } from './hall-config.js';
import type { EventBus } from './bus.js';
import type { HallQueries } from './hall-queries.js';
import type { HallPaths } from './hall-paths.js';
import type { HallStateStore } from './state-store.js';
import type { BusEvent } from '../machines/hall-effects.js';
import type { HallCommand } from '../machines/hall.machine.js';
import type { CommandHandlers, CommandService } from '../protocol/command-service.js';
import type { BoundReply, DroppedReply, ErrorReply, ReplyTo, UnboundReply } from '../protocol/replies.js';
import type { PermissionRegistry } from './permission-registry.js';
import type { QuestionFaces } from './question-desk.js';
import type { ActorWatching } from './actor-watching.js';

type DistributiveOmit<T, K extends keyof never> = T extends unknown ? Omit<T, K> : never;
/** A command for the hall actor, without the request id the gateway adds. */
export type HallRequest = DistributiveOmit<Extract<HallCommand, { reqId?: string }>, 'reqId'>;

/** What the hall actor answers each request with (see its actions). */
interface RequestReplies {
  'cmd.spawn': ReplyTo<'spawn'>;
  'cmd.kill': ReplyTo<'kill'>;
  'cmd.cancel': ReplyTo<'cancel'>;
  'cmd.queueFront': ReplyTo<'queue_front'>;
  'cmd.sessionReset': ReplyTo<'session_reset'>;
  'cmd.dropQueued': DroppedReply | ErrorReply;
  'cmd.bindSession': BoundReply | ErrorReply;
  'cmd.unbindSession': UnboundReply | ErrorReply;
}
export type HallRequestReply<R extends HallRequest> = RequestReplies[R['type']];

/** What the command line asked for; it wins over the environment and the config. */
export interface HallStartFlags {
  /** `--acp-port`: serve ACP on this TCP port. */
  acpPort?: number;
  /** `--acp-host`: the address for it. */
  acpHost?: string;
}

export interface HallServices {
  paths: HallPaths;
  config: HallConfig;
  env: Readonly<Record<string, string | undefined>>;
  flags: HallStartFlags;
  bus: EventBus;
  /** Durable state; adapters keep their own facts with `set`/`unset` operations in a namespace of their own. */
  store: HallStateStore;
  queries: HallQueries;
  /** Sends a command to the hall actor; resolves with its reply once what it changed is on disk. */
  request<R extends HallRequest>(command: R): Promise<HallRequestReply<R>>;
  /** Runs a control command as the socket would (checked payload, same reply), without dialling the socket. */
  command: CommandService;
  /** Publishes an adapter's own event (`cron.fired`, `telegram.in`, ...) on the event bus. */
  publish(event: BusEvent): void;
  newMissionId(): string;
  /** Where a surface that can ask a person registers, per binding, to answer raiders' permission questions. */
  permissionChannels: PermissionRegistry;
  /** The hall's one desk of permission questions put to people: the dashboard and Telegram open it for the runs they cover. */
  questions: QuestionFaces;
  /** Shows an actor system of the adapter's own (an ACP session) in `raider hall inspect`; returns its untrack. */
  trackActor(root: AnyActorRef): () => void;
  /**
   * Calls `listener` each time old events files were removed (keep_events), which is done on the
   * thread pool after a run's end: a view that lists the files (the dashboard's past runs) reads
   * them again then. Returns its unsubscribe.
   */
  onEventsPruned(listener: () => void): () => void;
  /** The live actors (the hall's and those adapters track), for a face that draws them. */
  actors: ActorWatching;
  /** The XState inspection observer the hall runs with, for actors an adapter creates. */
  inspect?: (event: InspectionEvent) => void;
  log(line: string): void;
}

export interface HallAdapter {
  readonly name: string;
  /** Control-socket commands this adapter answers (`telegram_reply`, ...). */
  readonly commands?: Readonly<Partial<CommandHandlers>>;
  /** Keys this adapter adds to the `status` reply. */
  status?(): Record<string, unknown>;
  start(): Promise<void>;
  /** The hall is stopping: take no new work (stop polling, close listeners). */
  stop(): Promise<void>;
}

/**
 * Builds an adapter, or returns null when the config does not ask for it. It
 * may load its module first, so a hall loads only the faces its config uses.
 */
export type HallAdapterFactory = (services: HallServices) => HallAdapter | null | Promise<HallAdapter | null>;
