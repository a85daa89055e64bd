/**
 * SIGINT and SIGTERM during a run:
 * - the first SIGINT cancels: the run's AbortSignal fires and the run ends
 *   `cancelled` at once (a sleeping engine or a running tool is cut off);
 * - SIGTERM, or a second SIGINT while cancelling, interrupts: the run ends
 *   `interrupted` with that signal;
 * - once the run has an outcome, further signals are ignored until the
 *   raider has written its document and kills itself with the same signal,
 *   so the parent sees "killed by signal".
 */

export type SignalName = 'INT' | 'TERM';

export class RunSignals {
  private readonly controller = new AbortController();
  private interruptSignal: SignalName | undefined;
  private settled = false;
  private wakeInterrupt: () => void = () => {};
  /** Resolves when an interrupt (not a plain cancel) arrives. */
  readonly interrupted: Promise<void> = new Promise((resolve) => (this.wakeInterrupt = resolve));

  private readonly onInt = (): void => this.receive('INT');
  private readonly onTerm = (): void => this.receive('TERM');

  /** Fires on cancel and on interrupt; the engine and tools watch it. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The signal that interrupted the run, if one did. */
  get interruptedBy(): SignalName | undefined {
    return this.interruptSignal;
  }

  install(): void {
    process.on('SIGINT', this.onInt);
    process.on('SIGTERM', this.onTerm);
  }

  /** Give SIGINT/SIGTERM back their default action (the run ended normally). */
  uninstall(): void {
    process.removeListener('SIGINT', this.onInt);
    process.removeListener('SIGTERM', this.onTerm);
  }

  /** A cancel that comes as a request rather than a signal (an ACP client's session/cancel): as the first SIGINT. */
  cancel(): void {
    if (!this.controller.signal.aborted) this.receive('INT');
  }

  /** The run has its outcome: later signals change nothing. */
  settle(): void {
    this.settled = true;
  }

  private receive(sig: SignalName): void {
    if (this.settled || this.interruptSignal) return;
    if (sig === 'INT' && !this.controller.signal.aborted) {
      this.controller.abort(new Error('cancelled by SIGINT'));
      return;
    }
    this.interruptSignal = sig;
    if (!this.controller.signal.aborted) this.controller.abort(new Error(`interrupted by SIG${sig}`));
    this.wakeInterrupt();
  }

  /**
   * Restore the default action and kill ourselves with `sig`. Should the
   * process somehow survive, it exits 128+n like a shell would report.
   */
  async dieBy(sig: SignalName): Promise<number> {
    this.uninstall();
    const name = sig === 'INT' ? 'SIGINT' : 'SIGTERM';
    process.kill(process.pid, name);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return 128 + (sig === 'INT' ? 2 : 15);
  }
}
