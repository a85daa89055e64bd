/**
 * `raider hall init` and `raider hall add-raider`: write `.raider-hall.yml`
 * in the current directory (config-edit.ts does the writing).
 */
import path from 'node:path';
import type { Command } from '../commonjs-libraries.js';
import { UsageError } from './dir-args.js';
import type { InitResult } from './config-edit.js';
import { collect } from './register.js';

const INIT_USAGE = 'Usage: raider hall init --name NAME [--engine E] [--persona P]';
const PROMPT = 'Raider name (e.g. Bjorn, Ragnar, Astrid, Ivar, Lagertha): ';

/**
 * The name `init` was not given: asked for at a terminal, else the first
 * line of stdin (a script may pipe it), without a prompt nobody reads.
 * Nothing there is a usage error.
 */
async function nameFromStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stdout.write(PROMPT);
  const readline = await import('node:readline');
  const rl = readline.createInterface({ input: process.stdin });
  let line = '';
  for await (const first of rl) {
    line = first;
    break;
  }
  rl.close();
  const name = line.trim();
  if (name === '') throw new UsageError(`No raider name given.\n${INIT_USAGE}`);
  return name;
}

/** The lines after "Hall initialised": the singleton slot of a numbered name, the engine `init` picked. */
function initNotes(name: string, result: InitResult, engineGiven: boolean): string {
  const notes = slotNote(name, result.key);
  if (engineGiven) return notes;
  const script = result.script !== undefined ? `the sample script ${result.script} it just wrote` : 'the script .raider/script.yml';
  return (
    `${notes}It runs offline with the scripted engine, playing ${script}; for a model, ` +
    `set raiders.${result.key}.engine in .raider-hall.yml to openai or anthropic (or init with --engine).\n`
  );
}

function slotNote(name: string, key: string): string {
  return key === name ? '' : `'${name}' is its singleton slot: spawn ${name} to run ${key}'s missions one at a time.\n`;
}

export function registerInitCommands(program: Command): void {
  program
    .command('init')
    .description('write .raider-hall.yml in the current directory with one raider')
    .option('--name <name>', 'the raider name')
    .option('--engine <engine>', 'engine of the raider: openai, anthropic or scripted (default: scripted, with a sample script)')
    .option('--persona <pack>', 'persona pack of the raider', 'caveman')
    .action(async (opts: { name?: string; engine?: string; persona: string }) => {
      const name = opts.name ?? (await nameFromStdin());
      const cwd = process.cwd();
      const { initConfig } = await import('./config-edit.js');
      const result = initConfig(cwd, name, { ...(opts.engine ? { engine: opts.engine } : {}), persona: opts.persona });
      process.stdout.write(
        `Hall initialised in ${cwd} with raider '${result.key}'.\n${initNotes(name, result, opts.engine !== undefined)}Start with: raider hall start\n`,
      );
    });

  program
    .command('add-raider')
    .description('add a raider to .raider-hall.yml in the current directory (a running hall reads it at its next start)')
    .argument('[name]', 'the raider name: letters, digits, _ and - (spawned as 1NAME, it runs one mission at a time)')
    .option('--engine <engine>', 'engine of the raider: openai, anthropic or scripted (default: the raider decides)')
    .option('--persona <pack>', 'persona pack', 'caveman')
    .option('--model <model>', 'model id for the engine')
    .option('--pack <pack>', 'an instruction pack (repeatable)', collect, [] as string[])
    .action(async (name: string | undefined, opts: { engine?: string; persona: string; model?: string; pack: string[] }) => {
      if (!name) throw new UsageError('Usage: raider hall add-raider NAME [--engine E] [--persona P] [--model M] [--pack X]...');
      const file = path.join(process.cwd(), '.raider-hall.yml');
      const { addRaider } = await import('./config-edit.js');
      const key = addRaider(file, name, {
        ...(opts.engine ? { engine: opts.engine } : {}),
        persona: opts.persona,
        ...(opts.model ? { model: opts.model } : {}),
        packs: opts.pack,
      });
      process.stdout.write(`Added raider '${key}' to ${file}.\n${slotNote(name, key)}`);
    });
}
