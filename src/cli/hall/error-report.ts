/**
 * How `raider hall` reports a command that failed: in words on stderr, or,
 * when the command was given `--json`, as one JSON object on stdout,
 * `{"error": WORDS, "code": CODE}`, with the same exit code either way
 * (README, "Using it"). The code is the hall's when it gave one, else the
 * CLI's own for what it decided: `usage`, `config`, `hall_not_running`,
 * `hall_unreachable`, or the error's own (`stop_timeout`, a system code).
 */
import { errorCode, errorMessage } from '../../domain/error-message.js';
import { exitCodeOf } from './dir-args.js';
import { HallAnswer, pretty } from './hall-ask.js';
import { definedFields } from '../../domain/defined-fields.js';

/** A failure with a code a script can decide on (under `--json`), the words for a person. */
export class CodedError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export interface ErrorReport {
  /** The words, as stderr shows them without `--json`. */
  error: string;
  code?: string;
  exitCode: number;
}

/**
 * A failure to reach the hall, by shape: the lazily loaded modules beside the
 * bundle throw their own copy of HallClientError (dir-args.ts, exitCodeOf).
 */
export function failureCode(err: unknown): string | undefined {
  if (!(err instanceof Error) || !('failure' in err)) return undefined;
  const failure = err.failure;
  if (typeof failure !== 'object' || failure === null || !('kind' in failure)) return undefined;
  if (failure.kind === 'no-socket') return 'hall_not_running';
  if (failure.kind === 'connect' && 'code' in failure && failure.code === 'ECONNREFUSED') return 'hall_not_running';
  return 'hall_unreachable';
}

const CODE_OF_EXIT: Record<number, string> = { 2: 'usage', 3: 'config' };

export function errorReport(err: unknown): ErrorReport {
  if (err instanceof HallAnswer) {
    return { error: `Hall: ${err.message}`, ...definedFields({ code: err.code }), exitCode: 1 };
  }
  // Usage errors (exit 2); anything else, a hall that is not there among them, is exit 1.
  const exitCode = exitCodeOf(err) ?? 1;
  const code = errorCode(err) ?? failureCode(err) ?? CODE_OF_EXIT[exitCode];
  return { error: errorMessage(err), ...definedFields({ code }), exitCode };
}

/** Writes the report the way the command was asked to speak; returns its exit code. */
export function writeErrorReport(report: ErrorReport, json: boolean): number {
  if (json) {
    const { exitCode: _exit, ...object } = report;
    process.stdout.write(pretty(object));
  } else process.stderr.write(`${report.error}\n`);
  return report.exitCode;
}
