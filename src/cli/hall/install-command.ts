/** `raider hall install [DIR]`: a systemd user unit that runs the hall (systemd-unit.ts writes it). */
import { Option, type Command } from '../commonjs-libraries.js';
import { SAFE_RAIDER_NAME } from '../../domain/names.js';
import { onlyDir, UsageError } from './dir-args.js';
import { parsePort } from './register.js';
import { definedFields } from '../../domain/defined-fields.js';

/** The unit name becomes a file name in the systemd unit directory: `../x` must not leave it. */
function parseUnitName(value: string): string {
  if (!SAFE_RAIDER_NAME.test(value)) {
    throw new UsageError(
      `--name: invalid unit name ${JSON.stringify(value)}: use 1 to 64 letters, digits, '_' or '-', starting with a letter or digit`,
    );
  }
  return value;
}

export function registerInstallCommand(program: Command): void {
  program
    .command('install')
    .description('install a systemd user unit that runs the hall of DIR (Restart=on-failure)')
    .argument('[dir]')
    .addOption(new Option('--name <name>', 'the unit name, checked like a raider name').default('raider-hall').argParser(parseUnitName))
    .addOption(new Option('--acp-port <port>', 'serve ACP on this TCP port').argParser(parsePort))
    .option('--acp-host <host>', 'address for the ACP port')
    .option('--stdout', 'print the unit instead of installing it')
    .action(async (dir: string | undefined, opts: { name: string; acpPort?: number; acpHost?: string; stdout?: boolean }) => {
      const { installUnit, unitText } = await import('./systemd-unit.js');
      const text = unitText({
        dir: onlyDir(dir ? [dir] : []),
        ...definedFields({ acpPort: opts.acpPort, acpHost: opts.acpHost }),
      });
      if (opts.stdout) {
        process.stdout.write(text);
        return;
      }
      const file = installUnit(opts.name, text);
      process.stdout.write(`Installed ${file}\nRun:\n  systemctl --user daemon-reload\n  systemctl --user enable --now ${opts.name}\n`);
    });
}
