/** `raider hall session list|reset`: session bindings. */
import type { Command } from '../commonjs-libraries.js';
import { dirThen, UsageError } from './dir-args.js';
import { ask } from './hall-ask.js';
import { registerSessionList } from './session-list-command.js';

export function registerSessionCommands(program: Command): void {
  const session = program.command('session').description('session bindings');
  registerSessionList(session);
  session
    .command('reset')
    .description('start a binding over: its next mission gets a new session: session reset [DIR] BINDING')
    .argument('[args...]')
    .action(async (args: string[]) => {
      const { dir, rest } = dirThen(args, 1);
      if (rest.length !== 1) throw new UsageError('Usage: raider hall session reset [DIR] BINDING');
      const reply = await ask(dir, 'session_reset', { binding: rest[0] ?? '' });
      process.stdout.write(
        `Binding ${reply.binding} reset: its next mission starts a new session (the old one, ${reply.session}, is kept).\n`,
      );
    });
}
