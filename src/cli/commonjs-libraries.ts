/**
 * The CommonJS libraries of the client commands, loaded with `require`.
 *
 * Why not `import`: Node 20's ESM loader scans every CommonJS module it
 * imports with cjs-module-lexer to find its named exports. For commander the
 * lexer runs hot enough that V8 optimizes it on a background thread, and the
 * process then waits for that compile before it can exit: 60-90 ms on every
 * `raider hall status`, more than the command itself takes. `require` skips
 * the scan.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

const commander = require('commander') as typeof import('commander');
export const { Command, CommanderError, Option } = commander;
export type Command = import('commander').Command;
export type CommanderError = import('commander').CommanderError;
export type Option = import('commander').Option;

// Loaded when first needed: most calls print no colour (not a terminal) and no JSON.
export function stableStringify(): typeof import('safe-stable-stringify') {
  return require('safe-stable-stringify') as typeof import('safe-stable-stringify');
}

export function picocolors(): typeof import('picocolors') {
  return require('picocolors') as typeof import('picocolors');
}
