/**
 * What the store reads back from disk, as zod schemas: the write-ahead log's
 * lines and the records of the state files. Data that does not match is
 * reported and skipped, never cast.
 */
import { z } from 'zod';
import type { RunWorktree } from '../../domain/worktree.js';

const telegramTarget = z.object({
  bot: z.string(),
  chat_id: z.union([z.string(), z.number()]),
  message_thread_id: z.number().optional(),
});

export const missionSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  mission: z.string(),
  binding: z.string().optional(),
  telegram: telegramTarget.optional(),
  permission_mode: z.string().optional(),
  cwd: z.string().optional(),
});

/**
 * A queue entry in a state file: as this hall writes it, as other
 * implementations of the hall write it (no id, maybe no name), or legacy (a plain string, the mission).
 * Fields of the wrong type are left out rather than losing the mission.
 */
export const fileEntrySchema = z.union([
  z.string(),
  z.object({
    id: z.string().optional().catch(undefined),
    name: z.string().optional().catch(undefined),
    mission: z.unknown().optional(),
    binding: z.string().optional().catch(undefined),
    telegram: telegramTarget.optional().catch(undefined),
    permission_mode: z.string().optional().catch(undefined),
    cwd: z.string().optional().catch(undefined),
  }),
]);

/** A worktree run's git worktree (docs/worktrees.md), kept with its run so a hall that adopts the run settles it. */
export const runWorktreeSchema = z.object({
  repo: z.string(),
  path: z.string(),
  cwd: z.string(),
  branch: z.string(),
  base: z.string(),
  copied: z.array(z.object({ source: z.string(), file: z.string() })),
  keep: z.enum(['changed', 'always']),
  record: z.string().optional(),
  binding: z.string().optional(),
  start: z.string().optional(),
}) satisfies z.ZodType<RunWorktree>;

export const ledgerRunSchema = z.object({
  id: z.string(),
  slot: z.string(),
  base_name: z.string(),
  entry: missionSchema,
  binding: z.string().optional(),
  session: z.string().optional(),
  pid: z.number().int().optional(),
  started_at: z.number(),
  events_path: z.string(),
  log_path: z.string(),
  worktree: runWorktreeSchema.optional(),
  spare: z.string().optional(),
});

const queueRef = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('slot'), slot: z.string() }),
  z.object({ kind: z.literal('binding'), binding: z.string() }),
]);

/** One line of the write-ahead log. */
export const durableOpSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('queue'), queue: queueRef, entry: missionSchema }),
  z.object({ op: z.literal('remove'), missionId: z.string() }),
  z.object({ op: z.literal('front'), missionId: z.string() }),
  z.object({ op: z.literal('pid'), runId: z.string(), pid: z.number().int() }),
  z.object({ op: z.literal('end'), runId: z.string() }),
  z.object({ op: z.literal('bind'), binding: z.string(), session: z.string() }),
  z.object({ op: z.literal('unbind'), binding: z.string() }),
  z.object({ op: z.literal('run'), run: ledgerRunSchema }),
  z.object({ op: z.literal('set'), ns: z.string(), key: z.string(), value: z.unknown() }),
  z.object({ op: z.literal('unset'), ns: z.string(), key: z.string() }),
]);

/** A zod failure in a line a user can act on: where, and what was wrong. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
    .join('; ');
}
