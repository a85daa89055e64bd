/** `raider acp ...`: the stdio agent for editors, or a terminal client. */
import path from 'node:path';
import { Command, CommanderError, Option } from '../commonjs-libraries.js';
import { defaultRoot } from '../hall/dir-args.js';
import { runStdioBridge } from './stdio-bridge.js';
import { runTerminalClient } from './terminal-client.js';
import { errorMessage } from '../../domain/error-message.js';
import { definedFields } from '../../domain/defined-fields.js';

export async function acpCommand(argv: string[]): Promise<number> {
  let code = 0;
  const program = new Command('raider acp')
    .description('ACP for editors: --stdio is the agent an editor launches; without it, a client in the terminal')
    .argument('[dir]', 'the hall directory (default: the current directory or the nearest one above it with .raider-hall.yml)')
    .option('--stdio', 'speak ACP on stdin/stdout, relaying to the hall of DIR (for Zed agent_servers)')
    .option('--host <host>', 'connect to an ACP TCP port on this host', '127.0.0.1')
    .addOption(new Option('--port <port>', 'connect to this ACP TCP port instead of the hall socket').argParser(Number))
    .option('--raider <name>', 'the raider of the new session (default: the first configured)')
    .exitOverride()
    .action(async (dir: string | undefined, opts: { stdio?: boolean; host: string; port?: number; raider?: string }) => {
      // Like `raider hall`: without DIR, the hall of the current directory or the nearest one above it.
      const root = dir !== undefined ? path.resolve(dir) : defaultRoot();
      if (opts.stdio) {
        code = await runStdioBridge({
          root,
          input: process.stdin,
          output: process.stdout,
          log: (line) => process.stderr.write(`raider acp: ${line}\n`),
        });
        return;
      }
      code = await runTerminalClient({
        root,
        host: opts.host,
        ...definedFields({ port: opts.port, raider: opts.raider }),
      });
    });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    process.stderr.write(`raider acp: ${errorMessage(err)}\n`);
    return 1;
  }
}
