/**
 * What the hall answers: one line of JSON with sorted keys per command, in
 * the order the commands came. Any command may be answered `{"error": TEXT}`
 * instead of its own reply.
 */
import { z } from 'zod';
import type { CommandName } from './commands.js';

const id = z.string().describe('The run id: SLOT-TIME or SLOT-TIME.N.');
const slot = z.string().describe('The slot the run belongs to: the raider name it was spawned with.');
const pid = z.number().int().describe("The raider's process id (its process group leader).");
const missionId = z.string().describe('The id the hall gave the mission when it took it.');
const binding = z.string().describe('The binding the run continues.');
const session = z.string().describe('The raider session the run continues or started.');
const notice = z
  .string()
  .describe(
    'Something the client should tell its user although the mission was taken, e.g. "bjorn2 has no entry in .raider-hall.yml; it runs with the raider\'s defaults".',
  );

/** What a program decides on when a command is refused: the words of `error` may change, the codes do not. */
export const ErrorCode = z.enum([
  'run_not_found',
  'run_ended',
  'mission_waiting',
  'mission_dropped',
  'question_answered',
  'question_not_open',
  'not_a_git_repo',
  'worktree_not_found',
  'not_our_branch',
  'worktree_in_use',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ErrorReply = z
  .object({
    error: z.string().describe('What went wrong, in words a user can act on.'),
    code: ErrorCode.optional().describe(
      'Why, as a code for programs to decide on (the words of `error` may change, the codes do not; absent where no program needs to tell errors apart): ' +
        '`run_not_found` the hall knows no run nor mission by that id (`error` is "raider not found"); ' +
        '`run_ended` the run has ended (`error` says with what status, and when); ' +
        '`mission_waiting` the id is a mission waiting in a queue, with no run yet (`cancel` drops it, `queue_front` moves it); ' +
        '`mission_dropped` the mission left its queue without a run and will not run; ' +
        '`question_answered` the permission question was answered already; `question_not_open` no such question is open; ' +
        '`not_a_git_repo` the hall root is in no git repository (`worktree_*`); `worktree_not_found` no run branch nor worktree by that name; ' +
        '`not_our_branch` the branch is not one the hall made for a run (`raider/RUN_ID`, `raider/BINDING/RUN_ID`); ' +
        "`worktree_in_use` the hall's record of the worktree is there: a run starts or works in it, a binding goes on in it, or the hall makes or removes it.",
    ),
  })
  .describe('A refused or failed command.');

/** The refusal of an id the hall knows nothing of; its words are the ones clients have always read. */
export function runNotFound(): ErrorReply {
  return { error: 'raider not found', code: 'run_not_found' };
}

/** True when `reply` is a refusal with this code. */
export function refusedWith(reply: object, code: ErrorCode): boolean {
  return 'code' in reply && reply.code === code;
}

export const SpawnStartedReply = z
  .object({
    id,
    pid,
    slot,
    events_path: z.string().describe("The run's events file (JSON lines the raider writes)."),
    mission_id: missionId,
    session: session.optional(),
    binding: binding.optional(),
    notice: notice.optional(),
  })
  .describe('The mission started a run.');

export const SpawnQueuedReply = z
  .object({
    queued: z.literal(1),
    slot,
    binding: binding.optional().describe('The binding queue the mission waits in (when it waits for its binding, not its slot).'),
    queue_depth: z.number().int().describe('How many missions wait in that queue, this one included.'),
    position: z.number().int().describe("The mission's place in that queue, 1 first, as `queue` numbers it."),
    mission_id: missionId,
    notice: notice.optional(),
  })
  .describe('The mission waits in a queue; its run starts when the queue gets to it.');

export const SpawnRefusedReply = z
  .object({
    status: z.literal('refused'),
    reason: z.string().describe('Why, as a word: unknown_raider, config, ...'),
    error: z.string().describe('Why, in words.'),
  })
  .describe('The hall will not run the mission (an unknown raider, a raider it cannot start).');

export const SpawnReply = z.union([SpawnStartedReply, SpawnQueuedReply, SpawnRefusedReply]);

const liveRun = { slot, pid, id, session: session.optional(), binding: binding.optional() };

export const PsReply = z
  .object({
    raiders: z
      .array(
        z.object({
          ...liveRun,
          base_name: z.string().describe('The `raiders:` entry the run uses: its name without a leading number.'),
          mission: z.string().describe('The mission text.'),
          hall: z.string().optional().describe('In a shared cluster: the hall that runs it (`ps` lists the runs of every hall).'),
        }),
      )
      .describe('Sorted by slot, then id.'),
  })
  .describe('The running raiders.');

export const StatusReply = z
  .looseObject({
    running: z.number().int().describe('How many raiders run (in a shared cluster: on every hall of the cluster).'),
    hall: z.string().optional().describe('In a shared cluster: the hall that answers (its `hall_id`).'),
    root: z.string().describe("The hall's directory."),
    slots: z.array(z.string()).describe('The slots with a running raider, sorted (in a shared cluster: on any hall).'),
    queues: z.record(z.string(), z.number().int()).describe("Missions waiting per slot (on a shared cluster, in the cluster's queue)."),
    binding_queues: z
      .record(z.string(), z.number().int())
      .describe("Missions waiting per binding (bindings with none are left out; on a shared cluster, in the cluster's queue)."),
    runs: z
      .array(
        z.object({
          id,
          slot,
          pid,
          age: z.number().describe('Seconds since the run started, to a tenth.'),
          binding: binding.optional(),
          hall: z.string().optional().describe('In a shared cluster: the hall that runs it (`status` lists the runs of every hall).'),
        }),
      )
      .describe('The running raiders, oldest first.'),
    waiting: z
      .array(
        z.object({
          mission_id: missionId,
          slot: z.string().describe('The raider name of the mission.'),
          binding: binding.optional().describe('The binding queue it waits in, when it waits for its binding.'),
          position: z.number().int().describe('Its place in that queue, 1 first.'),
          hall: z.string().optional().describe('On a shared cluster: the hall that claimed it and is starting it.'),
        }),
      )
      .optional()
      .describe("The waiting missions, slot queues first (absent when none wait); `queue` tells more. On a shared cluster, the cluster's."),
    starting: z.number().int().optional().describe('Missions that left their queue and whose raider has no pid yet.'),
    storage_error: z.string().optional().describe('Why the hall cannot write its state, while it cannot.'),
  })
  .describe('What the hall is doing; each face adds a section under its own key (cron, telegram, acp, mcp).');

export const AttachReply = z
  .object({
    ...liveRun,
    log_path: z
      .string()
      .describe("The slot's log file (for a run on another hall of a shared cluster: this hall's copy of the run's lines)."),
    events_path: z
      .string()
      .describe("The run's events file (for a run on another hall of a shared cluster: this hall's copy, filled as the run goes)."),
    hall: z.string().optional().describe('In a shared cluster: the hall that runs it.'),
    ended: z
      .literal(true)
      .optional()
      .describe('Asked with `ended: true`: the run already ended on another hall, and both files are complete copies (`pid` is 0).'),
  })
  .describe('Where a running raider writes.');

export const LogsReply = z.object({
  log: z
    .string()
    .describe(
      "The run's lines of its slot log: its `[hall]` lines and its stderr lines (`[ID] ` in front), with its result line once it ended.",
    ),
});

export const KillReply = z.object({ killed: z.literal(1), id }).describe('SIGTERM was sent.');

export const CancelRunReply = z.object({ cancelled: z.literal(1), id }).describe('SIGINT was sent.');

export const CancelQueuedReply = z
  .object({
    dropped: z.literal(1),
    mission_id: missionId,
    slot: z.string().describe('The raider name of the mission (its slot).'),
    binding: binding.optional().describe('The binding of the mission, when it had one.'),
  })
  .describe('The id was a waiting mission: it left its queue and will not run.');

export const CancelReply = z.union([CancelRunReply, CancelQueuedReply]);

export const WaitingMission = z.object({
  mission_id: missionId,
  position: z.number().int().describe('1 for the mission that starts next in this queue.'),
  name: z.string().describe('The raider name of the mission.'),
  mission: z.string().describe('The mission text.'),
  binding: binding.optional().describe('The binding of the mission, when it has one.'),
  age: z.number().optional().describe('Seconds since the hall took the mission, to a tenth.'),
  hall: z
    .string()
    .optional()
    .describe('On a shared cluster: the hall that claimed the mission and is starting it (absent while it waits).'),
});

export const QueueReply = z
  .object({
    queues: z
      .array(
        z.object({
          slot: z.string().optional().describe('The numbered slot whose queue this is.'),
          binding: binding.optional().describe('The binding whose queue this is (missions waiting for its session).'),
          missions: z.array(WaitingMission).describe('In the order they will start.'),
        }),
      )
      .describe('Slot queues by slot name, then binding queues by binding; empty queues are left out.'),
  })
  .describe('What waits.');

export const QueueFrontReply = z
  .object({
    moved: z.literal(1),
    mission_id: missionId,
    slot: z.string().describe('The raider name of the mission.'),
    binding: binding.optional().describe('The binding queue it waits in, when it waits for its binding.'),
    position: z.literal(1).describe('Its place in its queue now: 1, the next to start.'),
    from: z.number().int().describe('Its place before the move (1 when it was already first).'),
  })
  .describe('The mission is first in its queue.');

export const AnswerReply = z
  .object({
    answered: z.literal(1),
    run: z.string().describe('The run id.'),
    question: z.string().describe("The question's id."),
    answer: z.enum(['once', 'session', 'no']).describe('The answer the raider gets.'),
  })
  .describe('The raider has its answer; any later answer to the question is refused as already answered.');

export const SessionsReply = z
  .object({
    sessions: z
      .array(
        z.object({
          binding: binding.describe('The binding: slot:NAME, telegram:BOT:CHAT, acp:ID, cron:NAME.'),
          session,
          last_used: z.number().optional().describe("When the session's journal was last written, epoch ms (absent when it has none)."),
          last_used_at: z
            .string()
            .optional()
            .describe('The same moment as last_used, as an ISO 8601 UTC timestamp (absent when it has none).'),
        }),
      )
      .describe('Sorted by binding.'),
  })
  .describe('The session bindings.');

export const SessionResetReply = z
  .object({ reset: z.literal(1), binding, session: session.describe('The session that was forgotten.') })
  .describe('The binding has no session now.');

const removedWorktree = {
  run: z.string().describe("The run id (of a binding's branch: the run that made it)."),
  branch: z.string().describe("Its branch, `raider/RUN_ID` (a binding's: `raider/BINDING/RUN_ID`)."),
  worktree: z.string().optional().describe('Its worktree, when it had one on disk.'),
};

export const WorktreeListReply = z
  .object({
    worktrees: z
      .array(
        z.object({
          run: z.string().describe("The run id (of a binding's branch: the run that made it)."),
          branch: z.string().describe("Its branch, `raider/RUN_ID` (a binding's: `raider/BINDING/RUN_ID`)."),
          base: z.string().optional().describe('The commit the branch started from (absent when git no longer records it).'),
          path: z.string().optional().describe('The worktree, while it is on disk (absent when only the branch is left).'),
          changed: z.array(z.string()).describe('Files changed against the base, committed or not.'),
          age: z.number().describe('Seconds since the run started.'),
          size: z.number().int().describe('Bytes the worktree takes on disk; 0 without one.'),
          merged: z.boolean().describe("Merged into what its raider's runs start from (`worktree.base`, else the root's HEAD)."),
          uncommitted: z.boolean().describe('The worktree holds changes nobody committed.'),
          binding: z
            .string()
            .optional()
            .describe('The binding whose runs go on in it (as its branch spells it when the hall no longer records it).'),
          in_use: z
            .boolean()
            .describe(
              "The hall's record of it is there (a run starts or works in it, a binding goes on in it, the hall makes or removes it): `worktree_rm` and `worktree_prune` leave it alone.",
            ),
        }),
      )
      .describe('Oldest run first.'),
  })
  .describe("The runs' branches and worktrees.");

export const WorktreeRmReply = z
  .object({ removed: z.literal(1), ...removedWorktree })
  .describe('The worktree (when there was one) and the branch are gone.');

export const WorktreePruneReply = z
  .object({
    pruned: z
      .array(
        z.object({
          ...removedWorktree,
          reason: z.enum(['merged', 'max_age']).describe('`merged` into its base, or older than `worktree.max_age`.'),
        }),
      )
      .describe('What was removed.'),
    uncommitted: z
      .array(z.object(removedWorktree))
      .describe('Merged or old, but the worktree holds uncommitted changes: kept (commit or remove them, then prune again).'),
  })
  .describe('The merged and old run branches are gone.');

export const TelegramReplyReply = z
  .object({
    ok: z.literal(1),
    message_ids: z.array(z.number().int()).describe("Telegram's ids of the messages sent (a long text is split)."),
  })
  .describe('Telegram took the text.');

/** Every command's reply, by the `cmd` that names it (an `{error}` reply is possible for each). */
export const COMMAND_REPLIES = {
  spawn: SpawnReply,
  ps: PsReply,
  status: StatusReply,
  attach: AttachReply,
  logs: LogsReply,
  kill: KillReply,
  cancel: CancelReply,
  queue: QueueReply,
  queue_front: QueueFrontReply,
  answer: AnswerReply,
  sessions: SessionsReply,
  session_reset: SessionResetReply,
  worktree_list: WorktreeListReply,
  worktree_rm: WorktreeRmReply,
  worktree_prune: WorktreePruneReply,
  telegram_reply: TelegramReplyReply,
} as const satisfies Record<CommandName, z.ZodType>;

export type ErrorReply = z.infer<typeof ErrorReply>;
export type SpawnStartedReply = z.infer<typeof SpawnStartedReply>;
export type SpawnQueuedReply = z.infer<typeof SpawnQueuedReply>;
export type CancelQueuedReply = z.infer<typeof CancelQueuedReply>;
export type QueueFrontReply = z.infer<typeof QueueFrontReply>;
/** A command's own reply. */
export type Answer<C extends CommandName> = z.infer<(typeof COMMAND_REPLIES)[C]>;
/** What a command is answered: its own reply or an error. */
export type ReplyTo<C extends CommandName> = Answer<C> | ErrorReply;
/** Any reply of the control socket. */
export type Reply = ReplyTo<CommandName>;

/** The replies of the commands the hall's faces use inside the hall (ACP sessions), never sent on the socket. */
export type BoundReply = { bound: 1; binding: string; session: string };
export type UnboundReply = { unbound: 0 | 1; binding: string };
export type DroppedReply = { dropped: 1; binding: string };

/** Everything the hall actor answers a command with. */
export type HallReply = ReplyTo<'spawn' | 'kill' | 'cancel' | 'queue_front' | 'session_reset'> | BoundReply | UnboundReply | DroppedReply;
