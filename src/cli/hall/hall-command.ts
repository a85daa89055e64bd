/**
 * `raider hall ...`: the hall daemon and its client commands (README,
 * "Using it"). Exit codes: 0 success, 1 the hall answered an error or is
 * not there, 2 usage, 3 configuration.
 */
import { loadDaemon } from '../daemon-bundle.js';
import path from 'node:path';
import { Command, CommanderError, Option } from '../commonjs-libraries.js';
import { SAFE_RAIDER_NAME } from '../../domain/names.js';
import { registerAnswerCommand } from './answer-command.js';
import { registerDashboardCommand } from './dashboard-command.js';
import { dirThen, exitCodeOf, onlyDir, UsageError } from './dir-args.js';
import { followFile, lineSplitter } from './follow.js';
import { HallClientError, hallRequest } from '../../protocol/hall-client.js';
import { ask, HallAnswer, pretty, socketOf } from './hall-ask.js';
import { registerQueueCommand } from './queue-command.js';
import { registerSessionList } from './session-list-command.js';
import { endQuietlyWhenStdoutCloses } from '../closed-pipe.js';
import { renderPs, renderStatus, styleFor } from './render.js';
import { errorMessage } from '../../domain/error-message.js';
import { isRunLine } from '../../domain/log-lines.js';

/** One line from stdin after a prompt; what was typed before end of input counts, nothing is ''. */
async function askLine(prompt: string): Promise<string> {
  process.stdout.write(prompt);
  const readline = await import('node:readline');
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    rl.close();
    return line;
  }
  return '';
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * `logs --follow` of a running run: its lines of the slot log from its start
 * line, as the log grows, up to and including its result line.
 */
async function followRunLog(socketPath: string, id: string, logPath: string): Promise<void> {
  const fs = await import('node:fs');
  const text = fs.existsSync(logPath) ? fs.readFileSync(logPath) : Buffer.alloc(0);
  const at = text.indexOf(`[hall] raider ${id} started\n`);
  const resultPrefix = `[hall] raider ${id} `;
  let done = false;
  const lines = lineSplitter((line) => {
    if (done || !isRunLine(line, id)) return;
    process.stdout.write(`${line}\n`);
    if (line.startsWith(resultPrefix) && /^[A-Za-z_]+: /.test(line.slice(resultPrefix.length))) done = true;
  });
  await followFile({ socketPath, runId: id, file: logPath, offset: Math.max(0, at), onChunk: (chunk) => lines.push(chunk) });
  lines.flush();
}

/**
 * The `logs` answer of the hall, or, when no hall answers, the same read from
 * the files under `.raider-hall/` (the run's slot comes from its id).
 */
async function runLogText(dir: string, id: string): Promise<string> {
  let unreachable: HallClientError;
  try {
    return (await ask(dir, 'logs', { id })).log;
  } catch (err) {
    if (!(err instanceof HallClientError)) throw err;
    unreachable = err;
  }
  const [{ runLog }, { hallPaths }] = await Promise.all([
    import('../../adapters/storage/slot-logs.js'),
    import('../../adapters/storage/hall-paths.js'),
  ]);
  const onDisk = await runLog(hallPaths(dir), id, undefined);
  if ('log' in onDisk) return onDisk.log;
  throw new Error(`raider ${id} not found in ${dir}/.raider-hall/logs (${unreachable.message})`);
}

function buildProgram(setCode: (code: number) => void): Command {
  const program = new Command('raider hall')
    .description('Run and talk to a Raider Hall: a daemon that supervises raider processes for a project.')
    .option('--version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  program
    .command('init')
    .description('write .raider-hall.yml in the current directory with one raider')
    .option('--name <name>', 'the raider name')
    .option('--engine <engine>', 'engine of the raider (default: the raider decides)')
    .option('--persona <pack>', 'persona pack of the raider', 'caveman')
    .action(async (opts: { name?: string; engine?: string; persona: string }) => {
      let name = opts.name;
      if (name === undefined) {
        name = (await askLine('Raider name (e.g. Bjorn, Ragnar, Astrid, Ivar, Lagertha): ')).trim();
        if (name === '') {
          process.stderr.write('No raider name given.\n');
          return setCode(1);
        }
      }
      const cwd = process.cwd();
      const { initConfig } = await import('./config-edit.js');
      initConfig(path.join(cwd, '.raider-hall.yml'), name, { ...(opts.engine ? { engine: opts.engine } : {}), persona: opts.persona });
      process.stdout.write(`Hall initialised in ${cwd} with raider '${name}'.\nStart with: raider hall start\n`);
    });

  program
    .command('add-raider')
    .description('add a raider to .raider-hall.yml in the current directory (a running hall reads it at its next start)')
    .argument('[name]', 'the raider name: letters, digits, _ and -; a leading number (1bjorn) runs one mission at a time')
    .option('--engine <engine>', 'engine of the raider: openai, anthropic or scripted (default: the raider decides)')
    .option('--persona <pack>', 'persona pack', 'caveman')
    .option('--model <model>', 'model id for the engine')
    .option('--pack <pack>', 'an instruction pack (repeatable)', collect, [] as string[])
    .action(async (name: string | undefined, opts: { engine?: string; persona: string; model?: string; pack: string[] }) => {
      if (!name) throw new UsageError('Usage: raider hall add-raider NAME [--engine E] [--persona P] [--model M] [--pack X]...');
      const file = path.join(process.cwd(), '.raider-hall.yml');
      const { addRaider } = await import('./config-edit.js');
      addRaider(file, name, {
        ...(opts.engine ? { engine: opts.engine } : {}),
        persona: opts.persona,
        ...(opts.model ? { model: opts.model } : {}),
        packs: opts.pack,
      });
      process.stdout.write(`Added raider '${name}' to ${file}.\n`);
    });

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
            ...(opts.inspect !== undefined ? { inspect: opts.inspect } : {}),
            ...(opts.acpPort !== undefined ? { acpPort: opts.acpPort } : {}),
            ...(opts.acpHost !== undefined ? { acpHost: opts.acpHost } : {}),
          }),
        );
      },
    );

  program
    .command('stop')
    .description('stop the hall of DIR and wait until it has exited')
    .argument('[dir]')
    .option('--no-wait', 'return once the signal is sent')
    .action(async (dir: string | undefined, opts: { wait: boolean }) => {
      const { stopCommand } = await import('./stop.js');
      setCode(await stopCommand(onlyDir(dir ? [dir] : []), opts.wait));
    });

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

  program
    .command('spawn')
    .description('give a raider a mission: spawn [DIR] NAME MISSION...')
    .argument('[args...]')
    .option('--attach', 'follow the run until it ends')
    .option('--json', "print the hall's reply as JSON; with --attach, the raw event stream")
    .option('--binding <key>', 'run in the session of this binding')
    .action(async (args: string[], opts: { attach?: boolean; json?: boolean; binding?: string }) => {
      const { dir, rest } = dirThen(args, 2);
      if (rest.length < 2) throw new UsageError('Usage: raider hall spawn NAME MISSION [--attach]');
      const [name, ...words] = rest;
      const reply = await hallRequest(socketOf(dir), 'spawn', {
        name: name ?? '',
        mission: words.join(' '),
        ...(opts.binding !== undefined ? { binding: opts.binding } : {}),
      });
      // A refused mission's reply carries its error too.
      if ('error' in reply) throw new Error(`Hall error: ${reply.error}`);
      // On stderr: stdout stays the Spawned / queued line that scripts read.
      if (reply.notice !== undefined) process.stderr.write(`Note: ${reply.notice}.\n`);
      if (opts.json === true && opts.attach !== true) {
        process.stdout.write(pretty(reply));
        return;
      }
      if ('queued' in reply) {
        const where = reply.binding !== undefined ? `${reply.slot} (waiting for binding ${reply.binding})` : reply.slot;
        process.stdout.write(`Mission ${reply.mission_id} queued for ${where}, position ${reply.queue_depth}.\n`);
        if (opts.attach) process.stderr.write('Not attached: the mission has no run yet.\n');
        return;
      }
      const line = `Spawned raider ${reply.id} (PID ${reply.pid}) in slot ${reply.slot}.\n`;
      if (!opts.attach) {
        process.stdout.write(line);
        return;
      }
      process.stderr.write(line);
      const { attachRunning } = await import('./attach.js');
      setCode(await attachRunning(dir, socketOf(dir), reply, opts.json === true));
    });

  program
    .command('attach')
    .description("follow a running raider's events until it ends: attach [DIR] ID")
    .argument('[args...]')
    .option('--json', 'print the raw event stream')
    .action(async (args: string[], opts: { json?: boolean }) => {
      const { dir, rest } = dirThen(args, 1);
      if (rest.length !== 1) throw new UsageError('Usage: raider hall attach ID');
      const id = rest[0] ?? '';
      // No hall is no live run: an ended one can still be replayed from its files.
      const reply = await ask(dir, 'attach', { id }).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
      const { attachRunning, replayCopy, replayEnded } = await import('./attach.js');
      if (!(reply instanceof Error)) return setCode(await attachRunning(dir, socketOf(dir), reply, opts.json === true));
      // Not running (any more): how it ended, from its files.
      const code = await replayEnded(dir, id, opts.json === true);
      if (code !== null) return setCode(code);
      // Not a run of this hall: on a shared cluster, it may have ended on another hall.
      const ended = await ask(dir, 'attach', { id, ended: true }).catch(() => null);
      if (ended?.ended === true) return setCode(await replayCopy(ended, opts.json === true));
      if (ended !== null) return setCode(await attachRunning(dir, socketOf(dir), ended, opts.json === true));
      throw reply;
    });

  program
    .command('kill')
    .description('stop a raider with SIGTERM (SIGKILL after cancel_grace): kill [DIR] ID')
    .argument('[args...]')
    .action(async (args: string[]) => {
      const id = onlyId(args, 'kill');
      await ask(id.dir, 'kill', { id: id.id });
      process.stdout.write(`Killed raider ${id.id}.\n`);
    });

  program
    .command('cancel')
    .description(
      'cancel a raider with SIGINT (SIGTERM, then SIGKILL after cancel_grace), or drop a waiting mission by its id: cancel [DIR] ID',
    )
    .argument('[args...]')
    .action(async (args: string[]) => {
      const id = onlyId(args, 'cancel');
      const reply = await ask(id.dir, 'cancel', { id: id.id });
      process.stdout.write(
        'dropped' in reply
          ? `Dropped mission ${reply.mission_id}: it no longer waits for ${reply.binding ?? reply.slot} and will not run.\n`
          : `Cancelling raider ${reply.id}.\n`,
      );
    });

  program
    .command('logs')
    .description("a run's part of its slot log, also after it ended: logs [DIR] ID")
    .argument('[args...]')
    .option('--follow', 'keep printing while the run goes')
    .action(async (args: string[], opts: { follow?: boolean }) => {
      const { dir, rest } = dirThen(args, 1);
      const [id] = rest;
      if (rest.length !== 1 || id === undefined) throw new UsageError('Usage: raider hall logs ID [--follow]');
      if (opts.follow) {
        // No hall: nothing runs, the run's lines are all on disk already.
        const live = await hallRequest(socketOf(dir), 'attach', { id }).catch(() => null);
        if (live !== null && !('error' in live)) {
          await followRunLog(socketOf(dir), id, live.log_path);
          return;
        }
      }
      // Not followed, or already ended: the run's lines of its log as the hall has them.
      process.stdout.write(await runLogText(dir, id));
    });

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
        ...(opts.acpPort !== undefined ? { acpPort: opts.acpPort } : {}),
        ...(opts.acpHost !== undefined ? { acpHost: opts.acpHost } : {}),
      });
      if (opts.stdout) {
        process.stdout.write(text);
        return;
      }
      const file = installUnit(opts.name, text);
      process.stdout.write(`Installed ${file}\nRun:\n  systemctl --user daemon-reload\n  systemctl --user enable --now ${opts.name}\n`);
    });

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

  registerDashboardCommand(program);
  registerQueueCommand(program);
  registerAnswerCommand(program);

  const session = program.command('session').description('session bindings');
  registerSessionList(session);
  session
    .command('reset')
    .description('start a binding over: its next mission gets a new session: session reset [DIR] BINDING')
    .argument('[args...]')
    .action(async (args: string[]) => {
      const { dir, rest } = dirThen(args, 1);
      if (rest.length !== 1) throw new UsageError('Usage: raider hall session reset [DIR] BINDING');
      const reply = await ask(dir, 'session_reset', { binding: rest[0] ?? '' });
      process.stdout.write(
        `Binding ${reply.binding} reset: its next mission starts a new session (the old one, ${reply.session}, is kept).\n`,
      );
    });

  return program;
}

/** The one ID argument of kill and cancel, after the optional DIR. */
function onlyId(args: string[], cmd: string): { dir: string; id: string } {
  const { dir, rest } = dirThen(args, 1);
  if (rest.length !== 1 || rest[0] === undefined) throw new UsageError(`Usage: raider hall ${cmd} ID`);
  return { dir, id: rest[0] };
}

/** The unit name becomes a file name in the systemd unit directory: `../x` must not leave it. */
function parseUnitName(value: string): string {
  if (!SAFE_RAIDER_NAME.test(value)) {
    throw new UsageError(
      `--name: invalid unit name ${JSON.stringify(value)}: use 1 to 64 letters, digits, '_' or '-', starting with a letter or digit`,
    );
  }
  return value;
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 0 || n > 65535) throw new UsageError(`--acp-port: expected a port number, got ${value}`);
  return n;
}

export async function hallCommand(argv: string[]): Promise<number> {
  endQuietlyWhenStdoutCloses();
  let code = 0;
  const program = buildProgram((c) => (code = c));
  if (argv.length === 0 || argv[0] === 'help') {
    process.stdout.write(program.helpInformation());
    return 0;
  }
  if (argv.length === 1 && argv[0] === '--version') {
    const { RAIDER_VERSION } = await import('../../raider/version.js');
    process.stdout.write(`raider hall ${RAIDER_VERSION}\n`);
    return 0;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return 0;
      return 2;
    }
    if (err instanceof HallAnswer) {
      process.stderr.write(`Hall: ${err.message}\n`);
      return 1;
    }
    // Usage errors (exit 2); anything else, a hall that is not there among them, is exit 1.
    process.stderr.write(`${errorMessage(err)}\n`);
    return exitCodeOf(err) ?? 1;
  }
}
