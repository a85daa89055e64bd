/** `raider hall mcp [DIR]`: the hall's tools over MCP on stdin/stdout (mcp/stdio-bridge.ts). */
import type { Command } from '../commonjs-libraries.js';
import { onlyDir } from './dir-args.js';
import type { SetExitCode } from './register.js';

export function registerMcpCommand(program: Command, setCode: SetExitCode): void {
  program
    .command('mcp')
    .description('serve the hall tools over MCP on stdin/stdout, relaying to the hall of DIR (what `claude mcp add` launches)')
    .argument('[dir]')
    .action(async (dir: string | undefined) => {
      const root = onlyDir(dir ? [dir] : []);
      const { runMcpBridge } = await import('../mcp/stdio-bridge.js');
      setCode(
        await runMcpBridge({
          root,
          input: process.stdin,
          output: process.stdout,
          log: (line) => process.stderr.write(`raider hall mcp: ${line}\n`),
        }),
      );
    });
}
