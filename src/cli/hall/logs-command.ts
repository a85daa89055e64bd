/** `raider hall logs [DIR] ID [--follow]`: a run's part of its slot log, also after it ended. */
import type { Command } from '../commonjs-libraries.js';
import { isRunLine } from '../../domain/log-lines.js';
import { HallClientError, hallRequest } from '../../protocol/hall-client.js';
import { dirThen, UsageError } from './dir-args.js';
import { followFile, lineSplitter } from './follow.js';
import { ask, pretty, socketOf } from './hall-ask.js';

/**
 * `logs --follow` of a running run: its lines of the slot log from its start
 * line, as the log grows, up to and including its result line.
 */
async function followRunLog(socketPath: string, id: string, logPath: string, print: (line: string) => string): Promise<void> {
  const fs = await import('node:fs');
  const text = fs.existsSync(logPath) ? fs.readFileSync(logPath) : Buffer.alloc(0);
  const at = text.indexOf(`[hall] raider ${id} started\n`);
  const resultPrefix = `[hall] raider ${id} `;
  let done = false;
  const lines = lineSplitter((line) => {
    if (done || !isRunLine(line, id)) return;
    process.stdout.write(print(line));
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
    import('../../ports/hall-paths.js'),
  ]);
  const onDisk = await runLog(hallPaths(dir), id, undefined);
  if ('log' in onDisk) return onDisk.log;
  throw new Error(`raider ${id} not found in ${dir}/.raider-hall/logs (${unreachable.message})`);
}

export function registerLogsCommand(program: Command): void {
  program
    .command('logs')
    .description("a run's part of its slot log, also after it ended: logs [DIR] ID")
    .argument('[args...]')
    .option('--follow', 'keep printing while the run goes')
    .option('--json', 'print {"id", "log"}; with --follow, one {"id", "line"} object per line')
    .action(async (args: string[], opts: { follow?: boolean; json?: boolean }) => {
      const { dir, rest } = dirThen(args, 1);
      const [id] = rest;
      if (rest.length !== 1 || id === undefined) throw new UsageError('Usage: raider hall logs ID [--follow]');
      if (opts.follow) {
        // No hall: nothing runs, the run's lines are all on disk already.
        const live = await hallRequest(socketOf(dir), 'attach', { id }).catch(() => null);
        if (live !== null && !('error' in live)) {
          await followRunLog(socketOf(dir), id, live.log_path, (line) => (opts.json ? `${JSON.stringify({ id, line })}\n` : `${line}\n`));
          return;
        }
      }
      // Not followed, or already ended: the run's lines of its log as the hall has them.
      const log = await runLogText(dir, id);
      if (!opts.json) process.stdout.write(log);
      else if (opts.follow)
        for (const line of log
          .replace(/\n$/, '')
          .split('\n')
          .filter((l) => l !== ''))
          process.stdout.write(`${JSON.stringify({ id, line })}\n`);
      else process.stdout.write(pretty({ id, log }));
    });
}
