/**
 * `raider hall worktree list|rm|prune` (docs/worktrees.md): the runs'
 * branches and worktrees. Asked of the hall when one runs, so that its git
 * commands queue with the runs' own; when none runs, done on the repository
 * directly, with the hall's config for `worktree.max_age` and the raiders'
 * bases. Either way the hall's records of its worktrees say which are in use.
 */
import type { Command } from '../commonjs-libraries.js';
import { loadHallConfig } from '../../adapters/config/load-hall-config.js';
import { worktreeAdmin, worktreeHandlers } from '../../adapters/os/worktree-admin.js';
import { hallPaths } from '../../ports/hall-paths.js';
import type { CommandArgs } from '../../protocol/hall-client.js';
import { isAnswer, isErrorReply } from '../../protocol/hall-client.js';
import type { Answer, ReplyTo } from '../../protocol/replies.js';
import { formatBytes } from '../../domain/worktree.js';
import { ConfigValueError } from './config-edit.js';
import { dirThen, onlyDir, UsageError } from './dir-args.js';
import { failureCode } from './error-report.js';
import { ask, HallAnswer, pretty } from './hall-ask.js';
import { alignedTable, formatAge } from './render.js';

type WorktreeCommand = 'worktree_list' | 'worktree_rm' | 'worktree_prune';

type Handlers = ReturnType<typeof worktreeHandlers>;

/** The hall's answer, or, with no hall running, the same command done `here`, on the files. */
async function answer<C extends WorktreeCommand>(
  dir: string,
  cmd: C,
  args: CommandArgs<C>,
  here: (handlers: Handlers) => ReplyTo<C> | Promise<ReplyTo<C>>,
): Promise<Answer<C>> {
  try {
    return await ask(dir, cmd, args);
  } catch (err) {
    if (failureCode(err) !== 'hall_not_running') throw err;
  }
  const loaded = loadHallConfig(dir);
  if (!loaded.ok) throw new ConfigValueError(loaded.errors.join('\n'));
  // The hall's records say what is in use, a running hall or none: what a killed hall left is the next start's to finish.
  const reply = await here(worktreeHandlers(() => worktreeAdmin(hallPaths(dir), loaded.config)));
  if (isAnswer(reply)) return reply;
  throw new HallAnswer(isErrorReply(reply) ? reply.error : `${cmd} gave no answer`, 'code' in reply ? reply.code : undefined);
}

export function renderWorktrees(reply: Answer<'worktree_list'>): string {
  if (reply.worktrees.length === 0) return 'No run branch.\n';
  const rows = reply.worktrees.map((w) => [
    w.run,
    w.branch,
    w.base?.slice(0, 10) ?? '-',
    String(w.changed.length),
    formatAge(w.age),
    w.path === undefined ? '(branch only)' : formatBytes(w.size),
    [w.in_use ? 'in-use' : '', w.merged ? 'merged' : '', w.uncommitted ? 'uncommitted' : ''].filter((s) => s !== '').join(' '),
  ]);
  return alignedTable(['RUN', 'BRANCH', 'BASE', 'CHANGED', 'AGE', 'SIZE', 'STATE'], rows);
}

export function renderPruned(reply: Answer<'worktree_prune'>): string {
  const lines = reply.pruned.map((p) => `Removed ${p.branch}${p.worktree !== undefined ? ' and its worktree' : ''} (${p.reason}).`);
  for (const u of reply.uncommitted) {
    lines.push(
      `Kept ${u.branch}: its worktree ${u.worktree ?? ''} holds uncommitted changes (commit them, or 'raider hall worktree rm ${u.run}').`,
    );
  }
  return lines.length === 0 ? 'Nothing to prune.\n' : `${lines.join('\n')}\n`;
}

export function registerWorktreeCommands(program: Command): void {
  const worktree = program.command('worktree').description("the runs' git branches and worktrees (docs/worktrees.md)");
  worktree
    .command('list')
    .description('each run branch: run, branch, base, changed files, age, size on disk: worktree list [DIR]')
    .argument('[dir]')
    .option('--json', 'print the reply as JSON')
    .action(async (dir: string | undefined, opts: { json?: boolean }) => {
      const reply = await answer(onlyDir(dir ? [dir] : []), 'worktree_list', {}, (h) => h.worktree_list({ cmd: 'worktree_list' }));
      process.stdout.write(opts.json ? pretty(reply) : renderWorktrees(reply));
    });
  worktree
    .command('rm')
    .description("remove a run's worktree and branch: worktree rm [DIR] RUN|BRANCH")
    .argument('[args...]')
    .option('--json', 'print the reply as JSON')
    .action(async (args: string[], opts: { json?: boolean }) => {
      const { dir, rest } = dirThen(args, 1);
      if (rest.length !== 1) throw new UsageError('Usage: raider hall worktree rm [DIR] RUN|BRANCH');
      const reply = await answer(dir, 'worktree_rm', { target: rest[0] ?? '' }, (h) =>
        h.worktree_rm({ cmd: 'worktree_rm', target: rest[0] ?? '' }),
      );
      const what = reply.worktree !== undefined ? `${reply.branch} and its worktree ${reply.worktree}` : reply.branch;
      process.stdout.write(opts.json ? pretty(reply) : `Removed ${what}.\n`);
    });
  worktree
    .command('prune')
    .description('remove the run branches merged into their base or older than worktree.max_age: worktree prune [DIR]')
    .argument('[dir]')
    .option('--json', 'print the reply as JSON')
    .action(async (dir: string | undefined, opts: { json?: boolean }) => {
      const reply = await answer(onlyDir(dir ? [dir] : []), 'worktree_prune', {}, (h) => h.worktree_prune({ cmd: 'worktree_prune' }));
      process.stdout.write(opts.json ? pretty(reply) : renderPruned(reply));
    });
}
