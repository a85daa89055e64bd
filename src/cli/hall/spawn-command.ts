/** `raider hall spawn` and `raider hall attach`: give a raider a mission, follow a run. */
import type { Command } from '../commonjs-libraries.js';
import { hallRequest } from '../../protocol/hall-client.js';
import { dirThen, UsageError } from './dir-args.js';
import { CodedError } from './error-report.js';
import { ask, pretty, socketOf } from './hall-ask.js';
import { spawnArgs } from './mission-input.js';
import type { SetExitCode } from './register.js';
import { runNamed } from './run-by-name.js';
import { definedFields } from '../../domain/defined-fields.js';

export function registerSpawnCommands(program: Command, setCode: SetExitCode): void {
  program
    .command('spawn')
    .description('give a raider a mission: spawn [DIR] NAME MISSION..., or the mission on stdin (no MISSION, or -)')
    .argument('[args...]')
    .option('--attach', 'follow the run until it ends')
    .option('--json', "print the hall's reply as JSON; with --attach, the raw event stream")
    .option('--binding <key>', 'run in the session of this binding')
    .action(async (args: string[], opts: { attach?: boolean; json?: boolean; binding?: string }) => {
      const { dir, name, mission } = await spawnArgs(args);
      const reply = await hallRequest(socketOf(dir), 'spawn', {
        name,
        mission,
        ...definedFields({ binding: opts.binding }),
      });
      // A refused mission's reply carries its error too.
      if ('error' in reply) throw new CodedError(`Hall error: ${reply.error}`, 'reason' in reply ? reply.reason : undefined);
      // On stderr: stdout stays the Spawned / queued line that scripts read.
      if (reply.notice !== undefined) process.stderr.write(`Note: ${reply.notice}.\n`);
      if (opts.json === true && opts.attach !== true) {
        process.stdout.write(pretty(reply));
        return;
      }
      if ('queued' in reply) {
        const where = reply.binding !== undefined ? `${reply.slot} (waiting for binding ${reply.binding})` : reply.slot;
        process.stdout.write(`Mission ${reply.mission_id} queued for ${where}, position ${reply.position}.\n`);
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
      // A slot's or raider's name where a run id was meant: its one running run, or which ones there are.
      const named = await runNamed(dir, id, 'attach one of them');
      if (named !== null) {
        process.stderr.write(`Attaching to run ${named.id}, the one running in slot ${named.slot}.\n`);
        const live = await ask(dir, 'attach', { id: named.id });
        return setCode(await attachRunning(dir, socketOf(dir), live, opts.json === true));
      }
      throw reply;
    });
}
