/**
 * How the `raider hall` client commands ask the hall and print its answer:
 * shared by hall-command.ts and the commands in files of their own.
 */
import { stableStringify } from '../commonjs-libraries.js';
import { hallPaths } from '../../ports/hall-paths.js';
import type { CommandName } from '../../protocol/commands.js';
import { hallRequest, isAnswer, isErrorReply, type CommandArgs } from '../../protocol/hall-client.js';
import type { Answer, ReplyTo } from '../../protocol/replies.js';

/** An error the hall answered: `Hall: MESSAGE`, exit 1; `code` when the reply carried one. */
export class HallAnswer extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The code of an error reply, when the hall gave one. */
function replyCode(reply: object): string | undefined {
  return 'code' in reply && typeof reply.code === 'string' ? reply.code : undefined;
}

export function socketOf(dir: string): string {
  return hallPaths(dir).socket;
}

/** A command's reply; an error reply is thrown as the hall's answer. */
export async function ask<C extends CommandName>(dir: string, cmd: C, args: CommandArgs<C>): Promise<Answer<C>> {
  const reply: ReplyTo<C> = await hallRequest(socketOf(dir), cmd, args);
  if (isAnswer(reply)) return reply;
  throw new HallAnswer(isErrorReply(reply) ? reply.error : 'the hall did not answer the command', replyCode(reply));
}

/** A reply as `--json` prints it: sorted keys, indented. */
export function pretty(value: unknown): string {
  return `${JSON.stringify(JSON.parse(stableStringify()(value) ?? 'null'), null, 2)}\n`;
}
