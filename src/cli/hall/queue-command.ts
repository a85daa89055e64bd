/**
 * `raider hall queue [DIR] [SLOT] [--json]`: what waits, per numbered slot
 * and binding queue, in the order it will start, with each mission's id (for
 * `cancel ID`), position, age and text. `queue [DIR] --front MISSION_ID`
 * moves a waiting mission to the front of its queue.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from '../commonjs-libraries.js';
import type { Answer } from '../../protocol/replies.js';
import { dirThen, explicitHall, isPathWord, onlyDir } from './dir-args.js';
import { ask, pretty } from './hall-ask.js';
import { alignedTable, formatAge } from './render.js';
import { definedFields } from '../../domain/defined-fields.js';

/** The mission on one line, cut to what is left of the terminal's width. */
export function cutMission(text: string, room: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const width = Math.max(10, room);
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

export function renderQueue(reply: Answer<'queue'>, columns: number): string {
  if (reply.queues.length === 0) return 'Nothing waits.\n';
  return reply.queues
    .map((q) => {
      const title = q.slot !== undefined ? `${q.slot} (slot queue)` : `${q.binding ?? ''} (binding queue)`;
      const rows = q.missions.map((m) => [
        String(m.position),
        m.mission_id,
        m.age !== undefined ? formatAge(m.age) : '-',
        m.name,
        // On a shared cluster: claimed by a hall, which starts it now.
        m.hall !== undefined ? `(starting on ${m.hall}) ${m.mission}` : m.mission,
      ]);
      // The fixed columns take their widest cell; the mission gets the rest of the line.
      const fixed = [3, ...[1, 2, 3].map((i) => Math.max(...rows.map((r) => (r[i] ?? '').length), 4))].reduce((a, b) => a + b + 1, 2);
      const cut = rows.map((r) => [...r.slice(0, 4), cutMission(r[4] ?? '', columns - fixed)]);
      const table = alignedTable(['POS', 'MISSION_ID', 'AGE', 'NAME', 'MISSION'], cut, [3]);
      // Indent the table's lines, not the empty end after its last line break.
      return `${title}\n${table.replace(/^(?=.)/gm, '  ')}`;
    })
    .join('');
}

/** `queue DIR`, `queue SLOT`, `queue DIR SLOT`: a lone argument that is a path or a directory is the hall's. */
function dirAndSlot(args: string[]): { dir: string; slot?: string } {
  const [lone] = args;
  if (
    args.length === 1 &&
    lone !== undefined &&
    (isPathWord(lone) || fs.statSync(path.resolve(lone), { throwIfNoEntry: false })?.isDirectory())
  ) {
    return { dir: explicitHall(lone) };
  }
  const { dir, rest } = dirThen(args, 1);
  return rest[0] !== undefined ? { dir, slot: rest[0] } : { dir };
}

export function registerQueueCommand(program: Command): void {
  program
    .command('queue')
    .description(
      'what waits, in order, per slot and binding queue (cancel ID drops one): queue [DIR] [SLOT]; queue [DIR] --front MISSION_ID moves one first',
    )
    .argument('[args...]')
    .option('--json', 'print the reply as JSON')
    .option('--front <mission_id>', 'move this waiting mission to the front of its queue')
    .action(async (args: string[], opts: { json?: boolean; front?: string }) => {
      if (opts.front !== undefined) {
        const reply = await ask(onlyDir(args), 'queue_front', { id: opts.front });
        const where = reply.binding ?? reply.slot;
        process.stdout.write(
          opts.json
            ? pretty(reply)
            : reply.from === 1
              ? `Mission ${reply.mission_id} is already first in ${where}.\n`
              : `Moved mission ${reply.mission_id} to the front of ${where} (it was at position ${reply.from}).\n`,
        );
        return;
      }
      const { dir, slot } = dirAndSlot(args);
      const reply = await ask(dir, 'queue', definedFields({ slot }));
      process.stdout.write(opts.json ? pretty(reply) : renderQueue(reply, process.stdout.columns ?? 100));
    });
}
