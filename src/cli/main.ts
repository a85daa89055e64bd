/**
 * Entry of the `raider` command: routes the first word to a subcommand and
 * everything else to the built-in raider, which refuses a first word that is
 * neither a command nor a mission (args.ts, missionWordsProblem). Subcommands are imported lazily so
 * that each call loads only what it runs.
 */
import { endQuietlyWhenStdoutCloses } from '../os/closed-pipe.js';

export async function main(argv: string[]): Promise<number> {
  endQuietlyWhenStdoutCloses();
  const [first] = argv;
  switch (first) {
    case 'hall':
      return (await import('./hall/hall-command.js')).hallCommand(argv.slice(1));
    case 'acp':
      return (await import('./acp/acp-command.js')).acpCommand(argv.slice(1));
    case 'acp-client':
      return (await import('../acp-raider/acp-raider.js')).runAcpRaider(argv.slice(1));
    case 'acp-agent':
      return (await import('../raider/acp-agent.js')).runRaiderAcpAgent(argv.slice(1));
    case 'demo':
      return (await import('./demo.js')).demoCommand(argv.slice(1));
    case 'provider':
      return (await import('../raider/provider-command.js')).providerCommand(argv.slice(1));
    case 'help':
      return (await import('../raider/cli.js')).runRaiderCli(['--help']);
    default:
      return (await import('../raider/cli.js')).runRaiderCli(argv);
  }
}
