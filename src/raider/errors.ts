/**
 * Errors that end the raider before a run starts. Each one carries the exit
 * code of the raider contract, so the CLI can map any
 * of them to "message on stderr, nothing on stdout, exit N" in one place.
 */
export abstract class RaiderExit extends Error {
  abstract readonly exitCode: number;
}

/** Bad flags, no prompt, bad session reference: exit 2. */
export class UsageError extends RaiderExit {
  readonly exitCode = 2;
}

/** Unknown engine, missing or invalid script, bad root: exit 3. */
export class ConfigError extends RaiderExit {
  readonly exitCode = 3;
}

/** Another writer holds the session lock: exit 4. */
export class SessionInUseError extends RaiderExit {
  readonly exitCode = 4;
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} is in use by another raider`);
  }
}

export { errorMessage } from '../domain/error-message.js';
