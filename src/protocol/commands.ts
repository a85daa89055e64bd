/**
 * The commands the control socket takes: one schema per `payload` of a
 * `{"type":"command","payload":{"cmd":NAME,...}}` frame. A payload that a
 * schema refuses is answered `{"error": TEXT}` with the text of its first
 * problem; fields a command does not know are ignored.
 */
import { z } from 'zod';
import { MISSION_MAX_BYTES, missionProblem } from '../domain/mission.js';
import { bindingProblem, raiderNameProblem } from '../domain/names.js';
import { checkedString, optionalString, requiredString } from './checks.js';

const runId = (cmd: string) =>
  requiredString(`${cmd} requires an id`).describe('The run id (SLOT-TIME or SLOT-TIME.N), as spawn, ps or status gave it.');

export const SpawnPayload = z
  .object({
    cmd: z.literal('spawn'),
    name: checkedString(raiderNameProblem).describe(
      'The raider: a key of `raiders:` in .raider-hall.yml, with a leading number (1bjorn) for a slot that runs one mission at a time.',
    ),
    mission: z
      .string({ error: 'spawn requires a mission (a string)' })
      .nullish()
      .transform((text) => text ?? '')
      .pipe(checkedString((text) => (typeof text === 'string' ? missionProblem(text) : null)))
      .describe(`The mission text handed to the raider: not blank, at most ${MISSION_MAX_BYTES} bytes.`),
    binding: optionalString(checkedString(bindingProblem)).describe(
      'Missions with the same binding continue one raider session, one after another.',
    ),
  })
  .describe('Gives a raider a mission: it starts at once, or waits in its slot or binding queue.');

/**
 * A spawn payload that plainly passes SpawnPayload, read without it (zod
 * cost 5-10% of the hall's CPU per queued spawn); undefined for any other,
 * which then goes through the schema for its words. Gives what the schema
 * gives: the three fields, a null binding as none, unknown fields dropped.
 */
export function plainSpawn(body: Readonly<Record<string, unknown>>): CommandPayload<'spawn'> | undefined {
  const { cmd, name, mission, binding } = body;
  if (cmd !== 'spawn' || typeof name !== 'string' || typeof mission !== 'string') return undefined;
  if (raiderNameProblem(name) !== null || missionProblem(mission) !== null) return undefined;
  if (binding === undefined || binding === null) return { cmd, name, mission, binding: undefined };
  return typeof binding === 'string' && bindingProblem(binding) === null ? { cmd, name, mission, binding } : undefined;
}

export const PsPayload = z.object({ cmd: z.literal('ps') }).describe('The running raiders.');

export const StatusPayload = z
  .object({ cmd: z.literal('status') })
  .describe('What the hall is doing: runs, queues, and a section per face.');

export const AttachPayload = z
  .object({
    cmd: z.literal('attach'),
    id: runId('attach'),
    ended: z
      .boolean()
      .optional()
      .describe(
        'Also a run that already ended on another hall of a shared cluster: answered with a complete copy of its files and `ended: true` (a run of this hall that ended is replayed from its own files).',
      ),
  })
  .describe('Where a running raider writes: its pid, log and events file.');

export const LogsPayload = z
  .object({ cmd: z.literal('logs'), id: runId('logs') })
  .describe("A run's lines of its slot log (from its start line to its result line, without other runs' lines), running or ended.");

export const KillPayload = z
  .object({ cmd: z.literal('kill'), id: runId('kill') })
  .describe('Stops a running raider with SIGTERM (SIGKILL after cancel_grace): it ends as "interrupted".');

export const CancelPayload = z
  .object({
    cmd: z.literal('cancel'),
    id: requiredString('cancel requires an id').describe(
      'The run id (SLOT-TIME or SLOT-TIME.N), or the mission id (m…) of a mission that waits in a queue.',
    ),
  })
  .describe(
    'Cancels a running raider with SIGINT (SIGTERM, then SIGKILL after cancel_grace): it ends as "cancelled". A run whose raider is still being started gets the SIGINT as soon as it is, and ends "cancelled" too. Given a waiting mission\'s id, drops it from its queue: it never runs and has no raider.done, only raider.dropped.',
  );

export const QueuePayload = z
  .object({
    cmd: z.literal('queue'),
    slot: optionalString(requiredString('queue: slot must be a non-empty string')).describe(
      'Only the missions of this raider name (its slot queue and its missions in binding queues), or of this binding.',
    ),
  })
  .describe('What waits: every slot queue and binding queue, in the order the missions will start.');

export const QueueFrontPayload = z
  .object({
    cmd: z.literal('queue_front'),
    id: requiredString('queue_front requires an id').describe('The mission id (m…) of a mission that waits in a slot or binding queue.'),
  })
  .describe('Moves a waiting mission to the front of the queue it waits in: it starts next (after a run of that queue already starting).');

export const AnswerPayload = z
  .object({
    cmd: z.literal('answer'),
    run: requiredString('answer requires a run').describe('The run id whose raider asked (as in `permission.asked`).'),
    question: requiredString('answer requires a question').describe("The question's id within its run (as in `permission.asked`)."),
    answer: z
      .enum(['once', 'session', 'no'], { error: 'answer must be once, session or no' })
      .describe('`once`: this call only; `session`: this call and the rule it names, for the rest of the run; `no`: refuse.'),
  })
  .describe(
    "Answers any open permission question, whichever face asked first (with `questions: { socket: true }`, `questions.dashboard` or a Telegram bot's `questions`). The first answer wins, from whichever face (ACP client, dashboard, Telegram, socket).",
  );

export const SessionsPayload = z
  .object({ cmd: z.literal('sessions') })
  .describe('The bindings and the raider session each continues, with when its journal was last written.');

export const SessionResetPayload = z
  .object({
    cmd: z.literal('session_reset'),
    binding: requiredString('session_reset requires a binding').describe(
      'The binding whose session is forgotten: its next mission starts a new one.',
    ),
  })
  .describe('Starts a binding over with a new raider session.');

export const WorktreeListPayload = z
  .object({ cmd: z.literal('worktree_list') })
  .describe(
    "The runs' branches (`raider/RUN_ID`, a binding's `raider/BINDING/RUN_ID`) and the worktrees still on disk (docs/worktrees.md).",
  );

export const WorktreeRmPayload = z
  .object({
    cmd: z.literal('worktree_rm'),
    target: requiredString('worktree_rm requires a target').describe(
      "A run id (of a binding's branch: the run that made it), or its branch.",
    ),
  })
  .describe("Removes a run's worktree and its branch, whatever they hold; refused while it is in use (a run, a binding).");

export const WorktreePrunePayload = z
  .object({ cmd: z.literal('worktree_prune') })
  .describe(
    'Removes the run branches (and their worktrees) merged into their base or older than `worktree.max_age`; a worktree in use or with uncommitted changes stays.',
  );

/** The Telegram face checks these itself: whether the bot exists comes before the chat and the text. */
export const TelegramReplyPayload = z
  .object({
    cmd: z.literal('telegram_reply'),
    bot: z.unknown().optional().describe('The bot (a key of `telegram.bots:`), a string.'),
    chat_id: z.unknown().optional().describe('The chat: an integer, or its digits.'),
    text: z.unknown().optional().describe('The message, a non-empty string; long texts are split.'),
    message_thread_id: z.unknown().optional().describe('The forum topic: a positive integer.'),
  })
  .describe('Sends a message to a Telegram chat through a bot of the hall.');

/** Every command, by the `cmd` that names it. */
export const COMMAND_PAYLOADS = {
  spawn: SpawnPayload,
  ps: PsPayload,
  status: StatusPayload,
  attach: AttachPayload,
  logs: LogsPayload,
  kill: KillPayload,
  cancel: CancelPayload,
  queue: QueuePayload,
  queue_front: QueueFrontPayload,
  answer: AnswerPayload,
  sessions: SessionsPayload,
  session_reset: SessionResetPayload,
  worktree_list: WorktreeListPayload,
  worktree_rm: WorktreeRmPayload,
  worktree_prune: WorktreePrunePayload,
  telegram_reply: TelegramReplyPayload,
} as const;

export type CommandName = keyof typeof COMMAND_PAYLOADS;
/** A command's payload as a client writes it. */
export type CommandInput<C extends CommandName> = z.input<(typeof COMMAND_PAYLOADS)[C]>;
/** A command's payload once checked: what the hall acts on. */
export type CommandPayload<C extends CommandName> = z.output<(typeof COMMAND_PAYLOADS)[C]>;

export function isCommandName(value: unknown): value is CommandName {
  return typeof value === 'string' && Object.hasOwn(COMMAND_PAYLOADS, value);
}
