/**
 * `raider hall init` and `raider hall add-raider`: write `.raider-hall.yml`
 * in the current directory (config-edit.ts does the writing).
 */
import path from 'node:path';
import type { Command } from '../commonjs-libraries.js';
import { UsageError } from './dir-args.js';
import { collect, type SetExitCode } from './register.js';

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

export function registerInitCommands(program: Command, setCode: SetExitCode): void {
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
}
