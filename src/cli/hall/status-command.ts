/** `raider hall status` and `raider hall ps`: what the hall is doing (render.ts draws it). */
import type { Command } from '../commonjs-libraries.js';
import { onlyDir } from './dir-args.js';
import { ask, pretty } from './hall-ask.js';
import { renderPs, renderStatus, styleFor } from './render.js';

export function registerStatusCommands(program: Command): void {
  program
    .command('status')
    .description('what the hall is doing: running raiders, queues')
    .argument('[dir]')
    .option('--json', 'print the status reply as JSON')
    .action(async (dir: string | undefined, opts: { json?: boolean }) => {
      const reply = await ask(onlyDir(dir ? [dir] : []), 'status', {});
      process.stdout.write(opts.json ? `${pretty(reply)}\n` : renderStatus(reply, styleFor(process.stdout)));
    });

  program
    .command('ps')
    .description('the running raiders')
    .argument('[dir]')
    .option('--json', 'print the ps reply as JSON')
    .action(async (dir: string | undefined, opts: { json?: boolean }) => {
      const reply = await ask(onlyDir(dir ? [dir] : []), 'ps', {});
      process.stdout.write(opts.json ? pretty(reply) : renderPs(reply.raiders));
    });
}
