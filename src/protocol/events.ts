/**
 * The event bus: a `{"type":"subscribe","payload":{"filter":PREFIX}}` frame
 * turns a connection into a stream of events whose type starts with PREFIX
 * (`inspect.*` only when asked for by name), one line of JSON with sorted
 * keys each. Every event carries the envelope (version 1) beside its own
 * fields.
 */
import { z } from 'zod';
import { RunUsage } from '../domain/run-usage.js';

export const ENVELOPE_VERSION = 1;

export const EnvelopeFields = z.object({
  type: z.string().describe('What happened, as `FACE.WHAT`.'),
  version: z.literal(ENVELOPE_VERSION).describe('The envelope version.'),
  seq: z.number().int().describe('1, 2, 3 ... per hall process: a gap means a subscriber missed events.'),
  time: z.number().describe('When, in epoch seconds with the milliseconds.'),
  ts: z.number().int().describe('When, in whole epoch seconds.'),
  hall: z
    .string()
    .optional()
    .describe('In a shared cluster: the hall the event happened on (its `hall_id`); every hall relays the events of the others.'),
});

const id = z.string().describe('The run id.');
const slot = z.string().describe('The slot of the run.');
const pid = z.number().int().describe("The raider's process id.");
const missionId = z.string().describe('The id of the mission.');
const binding = z.string().describe('The binding the run continues.');
const session = z.string().describe('The raider session.');
const error = z.string().describe('Why, in words.');
const bot = z.string().describe('The bot, a key of `telegram.bots:`.');
const chatId = z.union([z.number().int(), z.string()]).describe('The Telegram chat.');
const updateId = z.number().int().describe("Telegram's update id.");

/** An event schema: its type as a literal, its fields, and what it means. */
function event<T extends string, S extends z.ZodRawShape>(type: T, fields: S, description: string) {
  return z.object({ type: z.literal(type), ...fields }).describe(description);
}

export const HallStarted = event(
  'hall.started',
  { root: z.string().describe("The hall's directory.") },
  'The hall took its directory and answers on its socket.',
);
export const HallStopping = event('hall.stopping', {}, 'The hall is stopping: its raiders get SIGTERM, new missions are refused.');
export const RaiderSpawned = event(
  'raider.spawned',
  {
    id,
    pid,
    slot,
    base_name: z.string().describe('The `raiders:` entry the run uses.'),
    mission_id: missionId,
    session: session.optional(),
    binding: binding.optional(),
  },
  'A raider process started.',
);
export const RaiderQueued = event(
  'raider.queued',
  {
    slot,
    binding: binding.optional(),
    queue_depth: z.number().int().describe('Missions waiting in that queue, this one included.'),
    mission_id: missionId,
  },
  'A mission waits in its slot queue (or its binding queue, with `binding`).',
);
export const RaiderRefused = event(
  'raider.refused',
  {
    status: z.literal('refused'),
    slot,
    name: z.string().describe('The raider name of the mission.'),
    binding: binding.optional(),
    reason: z.string().describe('Why, as a word.'),
    error,
    queued: z.boolean().describe('True when the mission had waited in a queue.'),
    mission_id: missionId,
  },
  'The hall will not run a mission; it was dropped.',
);
export const RaiderDropped = event(
  'raider.dropped',
  {
    mission_id: missionId,
    slot: z.string().describe('The raider name of the mission (its slot).'),
    binding: binding.optional().describe('The binding of the mission, when it had one.'),
    reason: z.string().describe('Why, as a word: `cancelled` (a cancel by its mission id), `binding_closed` (its binding went away).'),
  },
  'A waiting mission left its queue without a run; it will not run.',
);
export const RaiderMoved = event(
  'raider.moved',
  {
    mission_id: missionId,
    slot: z.string().describe('The raider name of the mission (its slot).'),
    binding: binding.optional().describe('The binding queue it waits in, when it waits for its binding.'),
    position: z.number().int().describe('Its place in its queue now: 1, the next to start.'),
    from: z.number().int().describe('Its place before the move.'),
  },
  'An operator moved a waiting mission to the front of its queue (`queue_front`).',
);
export const RaiderDone = event(
  'raider.done',
  {
    id,
    slot,
    pid,
    exit_code: z.number().int().describe('The exit code (0 when a signal ended the process).'),
    signaled: z.union([z.literal(0), z.literal(1)]).describe('1 when a signal ended the process.'),
    status: z
      .string()
      .describe(
        "completed, failed, cancelled, interrupted, ... A run whose raider wrote no result is `failed` (also after the escalation's SIGKILL; `hall_stop` says so), unless a cancel was asked for (`cancel_requested`) and the raider died by the cancel's SIGINT (a raider cancelled while it is still starting, before it handles SIGINT): then it is `cancelled`, and `error` says that it ended without a result.",
      ),
    response: z.unknown().optional().describe('What the raider answered.'),
    error: error.optional(),
    hall_stop: z
      .string()
      .optional()
      .describe(
        'Set when the hall had to escalate to stop the run: who asked and the signals sent, e.g. "cancelled by the hall, escalated to SIGKILL (SIGINT, SIGTERM, SIGKILL)".',
      ),
    session: session.optional(),
    binding: binding.optional(),
    mission_id: missionId,
    usage: RunUsage.optional().describe(
      "What the run used, when its raider said it (an ACP agent): `input_tokens`, `output_tokens`, `total_tokens` of the turn, `context_used` and `context_size` of its context, `cost` `{amount, currency}` of its session so far, and `run_cost` `{amount, currency}`, this run's own share of that cost (less the session's cost at the end of the binding's run before in the same agent session).",
    ),
    cancel_requested: z.literal(true).optional().describe('A cancel was asked for before the run ended.'),
    reported_by: z
      .string()
      .optional()
      .describe(
        "In a shared cluster, the end of a lost hall's run: the hall that took it over and reported it (`hall` names the lost one).",
      ),
    worktree: z
      .string()
      .optional()
      .describe("A worktree raider's run (docs/worktrees.md): the path of its git worktree, gone unless `worktree_kept`."),
    branch: z
      .string()
      .optional()
      .describe(
        "Its branch, `raider/RUN_ID` (a binding's: `raider/BINDING/RUN_ID`); deleted when the run changed nothing (`commits` 0, `changed` empty) and no binding goes on in it.",
      ),
    base: z.string().optional().describe('The commit its branch started from, in full.'),
    commits: z
      .number()
      .int()
      .optional()
      .describe("The commits the raider made on its branch in this run (the hall's work-in-progress commit not counted)."),
    changed: z.array(z.string()).optional().describe("Files changed against `base`, committed or not, relative to the repository's top."),
    wip_commit: z
      .boolean()
      .optional()
      .describe('True when the hall committed what the raider left uncommitted, as a work-in-progress commit.'),
    worktree_kept: z
      .boolean()
      .optional()
      .describe(
        "True when the worktree is still on disk (`keep: always`, a commit the hall could not make, a copied file the run changed, or the run's binding goes on in it).",
      ),
  },
  'A run ended (or was found ended when the hall started); it may come twice after a crash of the hall.',
);
export const RaiderSignal = event(
  'raider.signal',
  {
    id,
    slot,
    pid,
    signal: z
      .enum(['SIGINT', 'SIGTERM', 'SIGKILL'])
      .describe('SIGINT: a cancel. SIGTERM: a kill, a stopping hall, or a cancel after `cancel_grace`. SIGKILL: the whole process group.'),
  },
  'The hall signalled a running raider: each step of a cancel or kill (SIGINT, SIGTERM after `cancel_grace`, SIGKILL) is one event.',
);
export const SessionBound = event('session.bound', { binding, session }, 'A binding continues this session from now on.');
export const SessionReset = event(
  'session.reset',
  { binding, session: session.describe('The session that was forgotten.') },
  'A binding starts over.',
);
export const HallSessionError = event(
  'hall.session_error',
  { binding, error, id },
  'The session of a binding could not be continued; the run started a new one.',
);

export const CronFired = event(
  'cron.fired',
  {
    id: z.string().describe('The cron job.'),
    name: z.string().describe('The raider it runs.'),
    slot: z.string().describe('The time slot fired, ISO 8601.'),
    raider_id: z.string().optional().describe('The run it started.'),
    mission_id: missionId.optional(),
    catch_up: z.literal(true).optional().describe('A slot missed while the hall was down.'),
  },
  'A cron job fired.',
);
export const CronCoalesced = event(
  'cron.coalesced',
  {
    id: z.string().describe('The cron job.'),
    name: z.string().describe('The raider it runs.'),
    slot: z.string().describe('The time slot, ISO 8601.'),
  },
  'A cron slot came while the previous one still ran: it was folded into it.',
);

export const TelegramIn = event(
  'telegram.in',
  {
    bot,
    chat_id: chatId,
    message_thread_id: z.number().int().optional().describe('The forum topic.'),
    text: z.string().describe('The message.'),
    first_name: z.string().nullable().describe("The sender's first name."),
    username: z.string().nullable().describe("The sender's user name."),
    update_id: updateId,
  },
  'A message came in that the bot accepts.',
);
export const TelegramRejected = event(
  'telegram.rejected',
  {
    bot,
    chat_id: chatId,
    from_id: z.union([z.number().int(), z.string()]).nullable().describe('The sender.'),
    reason: z.string().describe('Why.'),
    update_id: updateId,
  },
  'A message from a chat or user the bot does not serve.',
);
export const TelegramUpdateError = event(
  'telegram.update_error',
  { bot, update_id: updateId.nullable(), error },
  'An update could not be handled.',
);
export const TelegramPollError = event(
  'telegram.poll_error',
  { bot, status: z.number().int().optional().describe('The HTTP status.'), error },
  'Polling Telegram failed; it is retried.',
);
export const TelegramSendError = event('telegram.send_error', { bot, chat_id: chatId, error }, 'A message could not be sent.');
export const TelegramConfigWarning = event(
  'telegram.config_warning',
  { bot, warning: z.string().describe('What is odd.') },
  'A bot is configured in a way that will not work as written.',
);

export const AcpStarted = event(
  'acp.started',
  { host: z.string().describe('The TCP host.'), port: z.number().int().describe('The TCP port.') },
  'The ACP face listens on TCP.',
);

const question = z.string().describe("The question's id within its run.");
export const PermissionAsked = event(
  'permission.asked',
  {
    id,
    question,
    title: z.string().describe('What the raider wants to do, in words.'),
    tool: z.string().describe('The tool.'),
    kind: z.string().describe('read, edit, delete, move, search, execute, think, fetch or other.'),
    input: z.record(z.string(), z.unknown()).describe("The tool call's input."),
    reason: z.string().describe('Why the raider asks.'),
    rule: z.string().optional().describe('The rule a `session` answer allows for the rest of the run.'),
    deadline: z.number().describe('Epoch ms: with no answer by then, the answer is `no`.'),
  },
  "A raider asks a permission question (with `questions: { socket: true }` or `{ dashboard: true }`, or a Telegram bot's `questions` for its chats' runs; a run an ACP client watches asks that client too); `answer` answers it.",
);
export const PermissionAnswered = event(
  'permission.answered',
  {
    id,
    question,
    answer: z.enum(['once', 'session', 'no']).describe('What the raider was told.'),
    reason: z.string().describe('Why, in words.'),
    by: z
      .enum(['dashboard', 'socket', 'acp', 'telegram', 'timeout', 'hall'])
      .describe(
        'Who answered: the dashboard, the socket (`answer`), the ACP client that watches the run, a button in a Telegram chat, no answer within permission_timeout, or the hall (the run ended first).',
      ),
    telegram: z
      .object({ bot: z.string().describe('The bot.'), user_id: z.string().describe('The Telegram user id of who pressed.') })
      .optional()
      .describe('With `by: telegram`: whose press decided.'),
  },
  'A permission question got its answer; later answers are refused as already answered.',
);

const fromDashboard = { source: z.literal('dashboard').describe('The face that asked.') };
export const DashboardSpawn = event(
  'dashboard.spawn',
  {
    ...fromDashboard,
    name: z.string().describe('The raider name asked for.'),
    mission: z.string().describe('The mission text.'),
    mission_id: missionId.describe("The id the hall gives the mission (the same as its run's `raider.spawned`)."),
  },
  'The dashboard asks for a spawn (published before the hall acts on it).',
);
export const DashboardCancel = event('dashboard.cancel', { ...fromDashboard, id }, 'The dashboard asks to cancel a run.');
export const DashboardKill = event('dashboard.kill', { ...fromDashboard, id }, 'The dashboard asks to kill a run.');
export const DashboardDrop = event('dashboard.drop', { ...fromDashboard, id: missionId }, 'The dashboard asks to drop a waiting mission.');
export const DashboardFront = event(
  'dashboard.front',
  { ...fromDashboard, id: missionId },
  'The dashboard asks to move a waiting mission to the front of its queue.',
);
export const DashboardAnswer = event(
  'dashboard.answer',
  {
    ...fromDashboard,
    id,
    question,
    answer: z.enum(['once', 'session', 'no']).describe('The answer given.'),
  },
  'The dashboard answers a permission question (published before the question takes it; the first answer wins).',
);

const inspectedActor = {
  id: z.string().describe('The actor id.'),
  parent: z.string().nullable().describe('Its parent actor.'),
  kind: z.string().describe('The machine it runs.'),
  state: z.string().describe('Its state, as dotted paths.'),
  status: z.string().describe('active, done, error or stopped.'),
  since: z.number().describe('Epoch ms it entered that state.'),
  waiting: z.number().int().optional().describe('Missions waiting in its queue.'),
  missions: z
    .array(
      z.object({
        mission_id: missionId,
        name: z.string().describe('The raider name of the mission.'),
        state: z.literal('queued'),
        since: z.number().optional().describe('Epoch ms the hall took the mission.'),
      }),
    )
    .optional()
    .describe('The missions waiting in its queue, in the order they will start.'),
};
export const InspectSnapshot = event(
  'inspect.snapshot',
  { actors: z.array(z.object(inspectedActor)) },
  'Every live actor, when someone subscribes to `inspect.`.',
);
export const InspectActor = event('inspect.actor', inspectedActor, 'An actor appeared.');
export const InspectState = event('inspect.state', inspectedActor, 'An actor changed state.');
export const InspectStopped = event('inspect.stopped', { id: z.string().describe('The actor id.') }, 'An actor stopped.');

/** The events the hall actor itself publishes. */
export const HALL_EVENTS = [
  HallStarted,
  HallStopping,
  RaiderSpawned,
  RaiderQueued,
  RaiderRefused,
  RaiderDropped,
  RaiderMoved,
  RaiderDone,
  SessionBound,
  SessionReset,
  HallSessionError,
] as const;

/** Every event on the bus, the faces' included. */
export const BUS_EVENTS = [
  ...HALL_EVENTS,
  RaiderSignal,
  CronFired,
  CronCoalesced,
  TelegramIn,
  TelegramRejected,
  TelegramUpdateError,
  TelegramPollError,
  TelegramSendError,
  TelegramConfigWarning,
  AcpStarted,
  PermissionAsked,
  PermissionAnswered,
  DashboardSpawn,
  DashboardCancel,
  DashboardKill,
  DashboardDrop,
  DashboardFront,
  DashboardAnswer,
  InspectSnapshot,
  InspectActor,
  InspectState,
  InspectStopped,
] as const;

/** An event the hall actor publishes, before its envelope. */
export type HallBusEvent = z.infer<(typeof HALL_EVENTS)[number]>;

/** Any event on the bus, before its envelope: one of the schemas above, discriminated by `type`. */
export const BusEventSchema = z.discriminatedUnion('type', BUS_EVENTS);
/**
 * What the bus carries: a protocol event, with `hall` when it happened on
 * another hall of a shared cluster (or, for a lost hall's run, names that hall).
 */
export type BusEvent = z.infer<typeof BusEventSchema> & { hall?: string };
/** The bus events of one type (or of a few). */
export type BusEventOf<T extends BusEvent['type']> = Extract<BusEvent, { type: T }>;

/** True when `value` is one of the protocol's events; the value itself is kept, fields a newer hall added included. */
export function isBusEvent(value: unknown): value is BusEvent {
  return BusEventSchema.safeParse(value).success;
}
export type RaiderDoneEvent = z.infer<typeof RaiderDone>;
