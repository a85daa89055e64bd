/** Why a hall could not start, with the exit code `raider hall start` reports (an adapter may refuse its config too). */
export class HallStartError extends Error {
  constructor(
    message: string,
    /** 3 for configuration errors, 1 otherwise. */
    readonly exitCode: number,
  ) {
    super(message);
  }
}
