/**
 * `raider hall session list [DIR] [--json]`: each binding, the raider
 * session it continues, and when that session was last used.
 */
import type { Command } from '../commonjs-libraries.js';
import type { Answer } from '../../protocol/replies.js';
import { onlyDir } from './dir-args.js';
import { ask, pretty } from './hall-ask.js';
import { alignedTable, formatAge } from './render.js';

export function renderSessions(reply: Answer<'sessions'>, now: number): string {
  if (reply.sessions.length === 0) return 'No binding has a session.\n';
  const rows = reply.sessions.map((s) => [
    s.binding,
    s.session,
    s.last_used !== undefined ? `${formatAge(Math.max(0, (now - s.last_used) / 1000))} ago` : '-',
  ]);
  return alignedTable(['BINDING', 'SESSION', 'LAST USED'], rows);
}

export function registerSessionList(session: Command): void {
  session
    .command('list')
    .description('the bindings, the session each continues, and its last use: session list [DIR]')
    .argument('[dir]')
    .option('--json', 'print the sessions reply as JSON')
    .action(async (dir: string | undefined, opts: { json?: boolean }) => {
      const reply = await ask(onlyDir(dir ? [dir] : []), 'sessions', {});
      process.stdout.write(opts.json ? pretty(reply) : renderSessions(reply, Date.now()));
    });
}
