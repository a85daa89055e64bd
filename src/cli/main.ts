/**
 * Entry of the `raider` command: routes the first word to a subcommand and
 * everything else to the built-in raider. Subcommands are imported lazily so
 * that each call loads only what it runs.
 */
export async function main(argv: string[]): Promise<number> {
  const [first] = argv;
  switch (first) {
    case 'hall':
      return (await import('./hall/hall-command.js')).hallCommand(argv.slice(1));
    case 'acp':
      return (await import('./acp/acp-command.js')).acpCommand(argv.slice(1));
    case 'demo':
      return (await import('./demo.js')).demoCommand(argv.slice(1));
    case 'provider':
      // Only `provider add|list|rm` is the subcommand; `raider provider is down` stays a mission.
      if (['add', 'list', 'rm'].includes(argv[1] ?? '')) {
        return (await import('../raider/provider-command.js')).providerCommand(argv.slice(1));
      }
      return (await import('../raider/cli.js')).runRaiderCli(argv);
    default:
      return (await import('../raider/cli.js')).runRaiderCli(argv);
  }
}
