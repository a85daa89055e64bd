/**
 * `raider hall logs [DIR] ID|NAME [--follow]`: a run's part of its slot log,
 * also after it ended; a slot's or raider's name reads its one running run,
 * as `attach` does (run-by-name.ts).
 */
import type { Command } from '../commonjs-libraries.js';
import { isRunLine } from '../../domain/log-lines.js';
import { HallClientError, hallRequest, isAnswer } from '../../protocol/hall-client.js';
import { refusedWith, type Answer } from '../../protocol/replies.js';
import { dirThen, UsageError } from './dir-args.js';
import { followFile, lineSplitter } from './follow.js';
import { ask, HallAnswer, pretty, socketOf } from './hall-ask.js';
import { runNamed } from './run-by-name.js';

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

/**
 * The id of the one run running under the name `asked` (a slot's or raider's),
 * said on stderr so that stdout stays the log; null when none runs under it.
 */
async function runIdNamed(dir: string, asked: string): Promise<string | null> {
  const named = await runNamed(dir, asked, 'ask for the logs of one of them');
  if (named === null) return null;
  process.stderr.write(`Logs of run ${named.id}, the one running in slot ${named.slot}.\n`);
  return named.id;
}

/**
 * The run `asked` names, by its id or by a name it runs under, and its
 * `attach` answer while it runs (null when no hall answers or it ended).
 */
async function liveRunOf(dir: string, asked: string): Promise<{ id: string; live: Answer<'attach'> | null }> {
  const reply = await hallRequest(socketOf(dir), 'attach', { id: asked }).catch(() => null);
  if (reply === null || !refusedWith(reply, 'run_not_found')) return { id: asked, live: reply !== null && isAnswer(reply) ? reply : null };
  const id = (await runIdNamed(dir, asked)) ?? asked;
  return { id, live: id === asked ? null : await ask(dir, 'attach', { id }).catch(() => null) };
}

/**
 * The run's lines of its log as the hall (or, with no hall, its files) has
 * them; when no run has the id `asked`, those of the one running under that name.
 */
async function logOf(dir: string, asked: string): Promise<{ id: string; log: string }> {
  try {
    return { id: asked, log: await runLogText(dir, asked) };
  } catch (err) {
    const id = err instanceof HallAnswer && err.code === 'run_not_found' ? await runIdNamed(dir, asked) : null;
    if (id === null) throw err;
    return { id, log: await runLogText(dir, id) };
  }
}

export function registerLogsCommand(program: Command): void {
  program
    .command('logs')
    .description("a run's part of its slot log, also after it ended: logs [DIR] ID; a slot's or raider's NAME reads its one running run")
    .argument('[args...]')
    .option('--follow', 'keep printing while the run goes')
    .option('--json', 'print {"id", "log"}; with --follow, one {"id", "line"} object per line')
    .action(async (args: string[], opts: { follow?: boolean; json?: boolean }) => {
      const { dir, rest } = dirThen(args, 1);
      const [asked] = rest;
      if (rest.length !== 1 || asked === undefined) throw new UsageError('Usage: raider hall logs ID [--follow]');
      // Followed: the live run by its id or name. No hall: nothing runs, the run's lines are all on disk already.
      const run = opts.follow ? await liveRunOf(dir, asked) : { id: asked, live: null };
      if (run.live !== null) {
        const { id } = run;
        await followRunLog(socketOf(dir), id, run.live.log_path, (line) => (opts.json ? `${JSON.stringify({ id, line })}\n` : `${line}\n`));
        return;
      }
      // Not followed, or already ended: the run's lines of its log as the hall has them (a followed
      // name is looked up once, above).
      const { id, log } = opts.follow ? { id: run.id, log: await runLogText(dir, run.id) } : await logOf(dir, asked);
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
