/**
 * `raider hall answer [DIR] RUN QUESTION once|session|no`: answers a
 * permission question of a run that no ACP client watches (with
 * `dashboard.questions: true`), as the dashboard's buttons do. The first
 * answer wins; a later one exits 1 naming who answered first.
 */
import type { Command } from '../commonjs-libraries.js';
import { dirThen, UsageError } from './dir-args.js';
import { ask, pretty } from './hall-ask.js';

const USAGE = 'Usage: raider hall answer [DIR] RUN QUESTION once|session|no';
const ANSWERS = ['once', 'session', 'no'] as const;
type AnswerWord = (typeof ANSWERS)[number];

function isAnswer(word: string | undefined): word is AnswerWord {
  return ANSWERS.some((a) => a === word);
}

export function registerAnswerCommand(program: Command): void {
  program
    .command('answer')
    .description('answer a permission question (dashboard.questions: true): answer [DIR] RUN QUESTION once|session|no')
    .argument('[args...]')
    .option('--json', 'print the reply as JSON')
    .action(async (args: string[], opts: { json?: boolean }) => {
      const { dir, rest } = dirThen(args, 3);
      const [run, question, answer] = rest;
      if (rest.length !== 3 || run === undefined || question === undefined || !isAnswer(answer)) throw new UsageError(USAGE);
      const reply = await ask(dir, 'answer', { run, question, answer });
      process.stdout.write(opts.json ? pretty(reply) : `Answered ${reply.answer} to question ${reply.question} of ${reply.run}.\n`);
    });
}
