/**
 * The shape of a `raider hall` subcommand module: it adds its command(s) to
 * the program; an action that decides the exit code itself reports it
 * through `setCode` (hall-command.ts returns it after the parse).
 */
import type { Command } from '../commonjs-libraries.js';
import { UsageError } from './dir-args.js';

export type SetExitCode = (code: number) => void;
export type RegisterCommand = (program: Command, setCode: SetExitCode) => void;

/** `--pack a --pack b`: a repeatable option's values, in order. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `--acp-port` of `start` and `install`. */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 0 || n > 65535) throw new UsageError(`--acp-port: expected a port number, got ${value}`);
  return n;
}
