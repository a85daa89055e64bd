/**
 * `raider hall ...`: the hall daemon and its client commands (README,
 * "Using it"). Exit codes: 0 success, 1 the hall answered an error or is
 * not there, 2 usage, 3 configuration.
 */
import { Command, CommanderError } from '../commonjs-libraries.js';
import { registerAnswerCommand } from './answer-command.js';
import { registerDashboardCommand } from './dashboard-command.js';
import { errorReport, writeErrorReport } from './error-report.js';
import { registerInitCommands } from './init-command.js';
import { registerInspectCommand } from './inspect-command.js';
import { registerInstallCommand } from './install-command.js';
import { registerKillCancel } from './kill-cancel-command.js';
import { registerLogsCommand } from './logs-command.js';
import { registerMcpCommand } from './mcp-command.js';
import { registerQueueCommand } from './queue-command.js';
import type { RegisterCommand, SetExitCode } from './register.js';
import { registerSessionCommands } from './session-command.js';
import { registerSpawnCommands } from './spawn-command.js';
import { registerStartStop } from './start-stop-command.js';
import { registerStatusCommands } from './status-command.js';
import { registerWorktreeCommands } from './worktree-command.js';
import { endQuietlyWhenStdoutCloses } from '../../os/closed-pipe.js';

/** The subcommands, each family in a module of its own, in the order `--help` lists them. */
const SUBCOMMANDS: readonly RegisterCommand[] = [
  registerInitCommands,
  registerStartStop,
  registerStatusCommands,
  registerSpawnCommands,
  registerKillCancel,
  registerLogsCommand,
  registerInstallCommand,
  registerInspectCommand,
  registerMcpCommand,
  registerDashboardCommand,
  registerQueueCommand,
  registerAnswerCommand,
  registerSessionCommands,
  registerWorktreeCommands,
];

function buildProgram(setCode: SetExitCode): Command {
  const program = new Command('raider hall')
    .description('Run and talk to a Raider Hall: a daemon that supervises raider processes for a project.')
    .option('--version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  for (const register of SUBCOMMANDS) register(program, setCode);
  return program;
}

export async function hallCommand(argv: string[]): Promise<number> {
  endQuietlyWhenStdoutCloses();
  let code = 0;
  const program = buildProgram((c) => (code = c));
  if (argv.length === 0 || (argv.length === 1 && argv[0] === 'help')) {
    process.stdout.write(program.helpInformation());
    return 0;
  }
  if (argv.length === 1 && argv[0] === '--version') {
    const { RAIDER_VERSION } = await import('../../protocol/raider-version.js');
    process.stdout.write(`raider hall ${RAIDER_VERSION}\n`);
    return 0;
  }
  // Whether the command that runs was given --json: its errors are then JSON too (error-report.ts).
  let json = false;
  program.hook('preAction', (_program, action) => {
    json = action.opts().json === true;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return 0;
      return 2;
    }
    return writeErrorReport(errorReport(err), json);
  }
}
