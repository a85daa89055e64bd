/**
 * The hall's command service: one handler per command, each given its
 * checked payload. The control socket and the faces inside the hall (MCP)
 * both go through `runCommand`, so a command means the same from either.
 */
import type { CommandName, CommandPayload } from './commands.js';
import { checkCommand } from './frames.js';
import type { ReplyTo } from './replies.js';
import { errorMessage } from '../domain/error-message.js';

export type CommandHandler<C extends CommandName> = (payload: CommandPayload<C>) => ReplyTo<C> | Promise<ReplyTo<C>>;
export type CommandHandlers = { [C in CommandName]: CommandHandler<C> };

/** Runs a command by name: its payload is checked first, and a handler that throws is answered as a failed command. */
export async function runCommand<C extends CommandName>(handlers: CommandHandlers, cmd: C, body: unknown): Promise<ReplyTo<C>> {
  const checked = checkCommand(cmd, body);
  if (!checked.ok) return { error: checked.error };
  const handler: CommandHandler<C> = handlers[cmd];
  try {
    return await handler(checked.payload);
  } catch (err) {
    return { error: `command failed: ${errorMessage(err)}` };
  }
}

/**
 * Asks the hall a command from inside the hall, as a client would on the
 * socket: the payload (without `cmd`) is checked against the command's schema.
 */
export type CommandService = <C extends CommandName>(cmd: C, payload: Readonly<Record<string, unknown>>) => Promise<ReplyTo<C>>;

export function commandService(handlers: CommandHandlers): CommandService {
  return (cmd, payload) => runCommand(handlers, cmd, { ...payload, cmd });
}
