/**
 * The hall tools an MCP client gets (docs/mcp.md; another implementation of
 * the hall described some of them and served none): their names, descriptions and JSON schemas
 * (from zod), and how a hall reply becomes a tool result. The hall's MCP
 * server and the `raider hall mcp` stdio bridge register the same list, so a
 * client sees the same tools whether the hall is up or not.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import stringify from 'safe-stable-stringify';
import { z } from 'zod';
import { errorMessage } from '../../domain/error-message.js';
import { definedFields } from '../../domain/defined-fields.js';

export const MCP_SERVER_NAME = 'raider-hall';

/** The longest `wait_for_raider` may wait in one call. */
export const MAX_WAIT_S = 3600;
export const DEFAULT_WAIT_S = 30;

const runId = z
  .string()
  .min(1)
  .describe('The run id, as spawn_raider or list_raiders gave it: SLOT-TIME or SLOT-TIME.N (for example bjorn-1767225600).');

const telegramId = z.union([z.number().int(), z.string().regex(/^-?\d{1,20}$/, 'a Telegram id: an integer or its digits')]);

export interface ToolSpec {
  title: string;
  description: string;
  inputSchema: z.ZodRawShape;
  annotations: ToolAnnotations;
}

export const HALL_TOOLS = {
  spawn_raider: {
    title: 'Spawn a raider',
    description:
      'Give a raider of the hall a mission. NAME is a raider name from .raider-hall.yml: a plain name (bjorn) runs every mission at once, ' +
      'a numbered name (1bjorn) is a singleton slot whose missions wait in a FIFO queue and continue one session. ' +
      'Answers the spawn reply: a started run {id, pid, slot, events_path, mission_id, [session, binding, notice]}; ' +
      'a queued mission {queued: 1, slot, queue_depth, position, mission_id, [notice]}; a notice (a name with no entry in .raider-hall.yml ' +
      "runs with the raider's defaults) is worth telling the user; " +
      'or a refused one (a tool error with status "refused", reason and error). ' +
      'Use wait_for_raider with the id (or the mission_id of a queued mission) to get the outcome.',
    inputSchema: {
      name: z
        .string()
        .min(1)
        .describe('The raider name: a key of raiders: in .raider-hall.yml, optionally with a leading number for a singleton slot.'),
      mission: z.string().min(1).describe('The mission text handed to the raider.'),
      binding: z
        .string()
        .min(1)
        .optional()
        .describe('Optional session binding key: missions with the same binding continue one raider session, one after another.'),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  list_raiders: {
    title: 'List running raiders',
    description:
      "The running raiders (the hall's ps): {raiders: [{id, slot, pid, base_name, mission, [session, binding]}]}, sorted by slot and id.",
    inputSchema: {},
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  hall_status: {
    title: 'Hall status',
    description:
      'What the hall is doing: {running, root, slots, queues (waiting missions per numbered slot), binding_queues, runs (id, slot, pid, age in seconds)}, ' +
      "plus sections of the hall's faces (cron next fire times, telegram poll health, acp, mcp).",
    inputSchema: {},
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  cancel_raider: {
    title: 'Cancel a raider',
    description:
      'Cancel a running raider: SIGINT, so it ends its run as "cancelled"; SIGTERM and then SIGKILL follow when it does not end within cancel_grace seconds. ' +
      'Answers {cancelled: 1, id}; an id that is not running is an error.',
    inputSchema: { id: runId },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  kill_raider: {
    title: 'Kill a raider',
    description:
      'Stop a running raider with SIGTERM: its run ends as "interrupted" (SIGKILL follows after cancel_grace). Prefer cancel_raider for a clean cancel. ' +
      'Answers {killed: 1, id}; an id that is not running is an error.',
    inputSchema: { id: runId },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  raider_logs: {
    title: 'Raider logs',
    description:
      "The run's lines of its slot log (its raider's stderr, each line starting with [ID], and the hall's [hall] lines about it), " +
      'from "[hall] raider ID started" to its result line, without the lines of other runs of the slot; ' +
      'works for running and for ended runs.',
    inputSchema: { id: runId },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  reset_session: {
    title: 'Reset a session binding',
    description:
      'Start a session binding over: its next mission gets a new raider session; the old journal is kept and a run still going finishes in it. ' +
      'Bindings look like slot:1bjorn, telegram:BOT:CHAT_ID, cron:JOB. Answers {reset: 1, binding, session: OLD_SESSION}.',
    inputSchema: { binding: z.string().min(1).describe('The binding key, for example slot:1bjorn or telegram:ops:42.') },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  },
  send_telegram: {
    title: 'Send a Telegram message',
    description:
      "Send a message with one of the hall's Telegram bots (telegram.bots in .raider-hall.yml). Answers {ok: 1} once Telegram took it; " +
      'an unknown bot, a hall without Telegram or a Telegram failure is an error.',
    inputSchema: {
      bot: z.string().min(1).describe('The bot name under telegram.bots in .raider-hall.yml.'),
      chat_id: telegramId.describe('The Telegram chat id (an integer; negative for groups).'),
      text: z.string().min(1).describe('The message text.'),
      message_thread_id: z.number().int().positive().optional().describe('The forum topic to post in, for a forum supergroup.'),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  wait_for_raider: {
    title: 'Wait for a raider',
    description:
      'Wait until a run ends and answer its raider.done event {id, slot, status (completed, failed, cancelled, interrupted), [response], [error], exit_code, ...}; ' +
      `or {status: "still running"} when it has not ended within timeout_s seconds (default ${DEFAULT_WAIT_S}, at most ${MAX_WAIT_S}); call again to keep waiting. ` +
      "A run that ended before the call answers its outcome from the hall's logs. " +
      'The id may also be the mission_id of a queued spawn: the answer is its run\'s raider.done, or {status: "still queued"}.',
    inputSchema: {
      id: z.string().min(1).describe('A run id (SLOT-TIME[.N]) or the mission_id of a queued spawn.'),
      timeout_s: z
        .number()
        .min(0)
        .max(MAX_WAIT_S)
        .optional()
        .describe(`Seconds to wait at most (default ${DEFAULT_WAIT_S}, 0 only looks).`),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
} satisfies Record<string, ToolSpec>;

export type HallToolName = keyof typeof HALL_TOOLS;
export const HALL_TOOL_NAMES = Object.keys(HALL_TOOLS) as HallToolName[];

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;
export type ToolHandler = (name: HallToolName, args: Record<string, unknown>, extra: ToolExtra) => Promise<CallToolResult>;

/** Registers every hall tool on `server`; `handle` answers the calls (arguments already checked against the schema). */
export function registerHallTools(server: McpServer, handle: ToolHandler): void {
  for (const name of HALL_TOOL_NAMES) {
    const spec: ToolSpec = HALL_TOOLS[name];
    server.registerTool(
      name,
      { title: spec.title, description: spec.description, inputSchema: spec.inputSchema, annotations: spec.annotations },
      async (args: Record<string, unknown>, extra: ToolExtra) => {
        try {
          return await handle(name, args, extra);
        } catch (err) {
          return toolError(errorMessage(err));
        }
      },
    );
  }
}

/** Canonical JSON (sorted keys), indented for a reader. */
export function canonical(value: unknown): string {
  return stringify(value, null, 2) ?? 'null';
}

export function toolError(message: string, structured?: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: message }],
    ...definedFields({ structuredContent: structured }),
  };
}

export function toolResult(reply: Record<string, unknown>, text: string = canonical(reply)): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: reply };
}

/**
 * A hall reply as a tool result: `{error}` is a tool error with the hall's
 * message, a refused spawn a tool error naming the reason; anything else the
 * reply itself, as canonical JSON and as structured content.
 */
export function replyResult(reply: Record<string, unknown>): CallToolResult {
  if (reply.status === 'refused') {
    return toolError(`refused (${String(reply.reason)}): ${String(reply.error)}; mission not run\n${canonical(reply)}`, reply);
  }
  // A refusal's code (run_ended, mission_waiting, ...) is there for the client's program to decide on.
  if (typeof reply.error === 'string')
    return toolError(reply.error, typeof reply.code === 'string' ? { error: reply.error, code: reply.code } : undefined);
  return toolResult(reply);
}
