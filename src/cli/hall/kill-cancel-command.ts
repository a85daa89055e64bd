/** `raider hall kill` and `raider hall cancel`: stop a run, or drop a waiting mission. */
import type { Command } from '../commonjs-libraries.js';
import { dirThen, UsageError } from './dir-args.js';
import { ask, pretty } from './hall-ask.js';

/** The one ID argument of kill and cancel, after the optional DIR. */
function onlyId(args: string[], cmd: string): { dir: string; id: string } {
  const { dir, rest } = dirThen(args, 1);
  if (rest.length !== 1 || rest[0] === undefined) throw new UsageError(`Usage: raider hall ${cmd} ID`);
  return { dir, id: rest[0] };
}

export function registerKillCancel(program: Command): void {
  program
    .command('kill')
    .description('stop a raider with SIGTERM (SIGKILL after cancel_grace): kill [DIR] ID')
    .argument('[args...]')
    .option('--json', "print the hall's reply as JSON")
    .action(async (args: string[], opts: { json?: boolean }) => {
      const id = onlyId(args, 'kill');
      const reply = await ask(id.dir, 'kill', { id: id.id });
      process.stdout.write(opts.json ? pretty(reply) : `Killed raider ${id.id}.\n`);
    });

  program
    .command('cancel')
    .description(
      'cancel a raider with SIGINT (SIGTERM, then SIGKILL after cancel_grace), or drop a waiting mission by its id: cancel [DIR] ID',
    )
    .argument('[args...]')
    .option('--json', "print the hall's reply as JSON")
    .action(async (args: string[], opts: { json?: boolean }) => {
      const id = onlyId(args, 'cancel');
      const reply = await ask(id.dir, 'cancel', { id: id.id });
      process.stdout.write(
        opts.json
          ? pretty(reply)
          : 'dropped' in reply
            ? `Dropped mission ${reply.mission_id}: it no longer waits for ${reply.binding ?? reply.slot} and will not run.\n`
            : `Cancelling raider ${reply.id}.\n`,
      );
    });
}
