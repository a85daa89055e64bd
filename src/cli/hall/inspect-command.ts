/** `raider hall inspect [DIR]`: the live actor tree of the hall (inspect-view.ts draws it). */
import type { Command } from '../commonjs-libraries.js';
import { onlyDir } from './dir-args.js';
import { socketOf } from './hall-ask.js';
import type { SetExitCode } from './register.js';
import { styleFor } from './render.js';

export function registerInspectCommand(program: Command, setCode: SetExitCode): void {
  program
    .command('inspect')
    .description('the live actor tree of the hall: runs, slots, binding queues, ACP sessions, questions')
    .argument('[dir]')
    .option('--once', 'print one snapshot and exit')
    .option('--json', 'print the raw inspect.* event stream')
    .action(async (dir: string | undefined, opts: { once?: boolean; json?: boolean }) => {
      const { inspectView } = await import('./inspect-view.js');
      setCode(
        await inspectView({
          socketPath: socketOf(onlyDir(dir ? [dir] : [])),
          once: opts.once === true,
          json: opts.json === true,
          style: styleFor(process.stdout),
          out: process.stdout,
        }),
      );
    });
}
