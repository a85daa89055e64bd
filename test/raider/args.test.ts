// The flag parser in-process: it is a pure function of argv.
import { describe, expect, it } from 'vitest';
import { coerceOptionValue, parseRaiderArgs } from '../../src/raider/args.js';
import { UsageError } from '../../src/raider/errors.js';

function usageError(argv: string[]): string {
  try {
    parseRaiderArgs(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`no usage error for ${argv.join(' ')}`);
}

describe('parseRaiderArgs', () => {
  it('reads the flags the hall passes, and the mission as one word after --', () => {
    const a = parseRaiderArgs([
      '--stream-json',
      '--engine',
      'scripted',
      '--model',
      'm1',
      '--pack',
      'p1',
      '--pack',
      'persona',
      '-o',
      'preferred_lib_target=/x/lib',
      '--root',
      '/tmp',
      '--session',
      '20260101-000000-abcd',
      '--permission-mode',
      'acceptEdits',
      '--permission-channel',
      '/tmp/ch.sock',
      '--provider',
      'acme',
      '--',
      'do --this now',
    ]);
    expect(a).toMatchObject({
      machine: 'stream-json',
      engine: 'scripted',
      model: 'm1',
      packs: ['p1', 'persona'],
      options: { preferred_lib_target: '/x/lib' },
      root: '/tmp',
      session: { kind: 'resume', ref: '20260101-000000-abcd' },
      permissionMode: 'acceptEdits',
      permissionChannel: '/tmp/ch.sock',
      provider: 'acme',
      words: ['do --this now'],
    });
  });

  it('takes short flags and joins several words', () => {
    const a = parseRaiderArgs(['-e', 'scripted', '-m', 'x', '-r', '.', '-oa=1', 'hello', 'big', 'world']);
    expect(a).toMatchObject({ engine: 'scripted', model: 'x', root: '.', options: { a: 1 }, words: ['hello', 'big', 'world'] });
  });

  it('accepts version 1 inline and leaves `--json 3` in the prompt', () => {
    expect(parseRaiderArgs(['--stream-json=1', 'x']).machine).toBe('stream-json');
    const a = parseRaiderArgs(['--json', '3']);
    expect(a.machine).toBe('json');
    expect(a.words).toEqual(['3']);
  });

  it('coerces -o values', () => {
    expect(coerceOptionValue('12')).toBe(12);
    expect(coerceOptionValue('-0.5')).toBe(-0.5);
    expect(coerceOptionValue('true')).toBe(true);
    expect(coerceOptionValue('false')).toBe(false);
    expect(coerceOptionValue('1.2.3')).toBe('1.2.3');
    const a = parseRaiderArgs(['-o', 'k=a=b', '-o', 'k2=', 'x']);
    expect(a.options).toEqual({ k: 'a=b', k2: '' });
  });

  it('refuses what the contract refuses', () => {
    expect(usageError(['--stream-json=2', 'x'])).toBe("unknown --stream-json version '2' (known: 1)");
    expect(usageError(['--json', '--stream-json', 'x'])).toBe('--json, --stream-json: only one machine output format at a time');
    expect(usageError(['--session', 'abcd', '--continue', 'x'])).toMatch(/only one of --session, --continue, --no-session/);
    expect(usageError(['--no-session', '--continue', 'x'])).toMatch(/only one of/);
    expect(usageError(['--bogus', 'x'])).toBe('unknown option --bogus');
    expect(usageError(['-o', 'novalue', 'x'])).toMatch(/KEY=VALUE/);
    expect(usageError(['--permission-mode', 'yolo', 'x'])).toMatch(/unknown --permission-mode 'yolo'/);
    expect(usageError(['--max-iterations', '0', 'x'])).toMatch(/--max-iterations/);
    expect(usageError(['--engine', '--', 'x'])).toBe('option --engine needs a value');
    expect(usageError(['x', '--engine'])).toBe('option --engine needs a value');
    expect(usageError(['--continue=yes', 'x'])).toBe('option --continue takes no value');
  });
});
