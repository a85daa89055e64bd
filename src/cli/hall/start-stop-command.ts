/** `raider hall start` and `raider hall stop`: the hall's own life. */
import { Option, type Command } from '../commonjs-libraries.js';
import { loadDaemon } from '../daemon-bundle.js';
import { onlyDir } from './dir-args.js';
import { pretty } from './hall-ask.js';
import { parsePort, type SetExitCode } from './register.js';
import { definedFields } from '../../domain/defined-fields.js';

export function registerStartStop(program: Command, setCode: SetExitCode): void {
  program
    .command('start')
    .description('run the hall of DIR (default: the current directory)')
    .argument('[dir]')
    .option('--daemon', 'run in the background, logging to .raider-hall/hall.log')
    .option('--quiet', 'do not print events in the foreground')
    .addOption(new Option('--acp-port <port>', 'serve ACP on this TCP port').argParser(parsePort))
    .option('--acp-host <host>', 'address for the ACP port (default 127.0.0.1)')
    .option('--inspect [url]', 'show the actor system in the Stately inspector (a local relay on port 8080, or this WebSocket URL)')
    .action(
      async (
        dir: string | undefined,
        opts: { daemon?: boolean; quiet?: boolean; acpPort?: number; acpHost?: string; inspect?: string | boolean },
      ) => {
        const { startCommand } = await loadDaemon();
        setCode(
          await startCommand({
            dir: onlyDir(dir ? [dir] : []),
            daemon: opts.daemon === true,
            quiet: opts.quiet === true,
            ...definedFields({ inspect: opts.inspect, acpPort: opts.acpPort, acpHost: opts.acpHost }),
          }),
        );
      },
    );

  program
    .command('stop')
    .description('stop the hall of DIR and wait until it has exited (exit 0 also when no hall runs there)')
    .argument('[dir]')
    .option('--no-wait', 'return once the signal is sent')
    .option('--json', 'print what was done as JSON: {"result": "stopped"|"signalled"|"not_running", ...}')
    .action(async (dir: string | undefined, opts: { wait: boolean; json?: boolean }) => {
      const root = onlyDir(dir ? [dir] : []);
      const { notRunningText, signalledText, stopHall } = await import('./stop.js');
      const outcome = await stopHall(root, opts.wait, (pid) => {
        if (opts.json !== true) process.stdout.write(signalledText(pid));
      });
      if (opts.json === true) process.stdout.write(pretty(outcome));
      else if (outcome.result === 'not_running') process.stdout.write(notRunningText(root, outcome));
    });
}
