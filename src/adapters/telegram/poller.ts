/**
 * The hall's own getUpdates loop for one bot: one long
 * poll at a time, aborted when the hall stops; updates handled one after the
 * other; the offset past an update persisted only once the update is done
 * with (its mission durably taken by the hall), so a restart neither loses
 * nor repeats a message. Failures are published as `telegram.poll_error` and
 * waited out as pollRetryDelay says; the loop never spins and never gives up.
 */
import type { HallServices } from '../../ports/hall-services.js';
import { isBadToken, pollRetryDelay, type ApiFailure, type PollBackoff } from '../../domain/telegram-retry.js';
import { BotApiError } from './bot-api.js';
import { sleep } from './sender.js';
import type { BotParts, UpdateHandler } from './update-handler.js';
import { errorMessage } from '../../domain/error-message.js';

export const TELEGRAM_NS = 'telegram';

export interface PollHealth {
  state: 'starting' | 'polling' | 'retrying' | 'stopped';
  /** The last getUpdates that answered. */
  last_ok: string | null;
  last_error: { at: string; error: string; status?: number } | null;
  /** Failures in a row. */
  failures: number;
  retry_at: string | null;
  /** The next update id asked for. */
  offset: number | null;
}

interface StoredOffset {
  bot_id: string;
  offset: number;
}

export class BotPoller {
  private offset: number | undefined;
  private readonly health: PollHealth = { state: 'starting', last_ok: null, last_error: null, failures: 0, retry_at: null, offset: null };

  constructor(
    private readonly services: HallServices,
    private readonly parts: BotParts,
    private readonly handler: UpdateHandler,
    private readonly options: { pollTimeoutS: number; backoff: PollBackoff },
    private readonly signal: AbortSignal,
  ) {}

  status(): PollHealth {
    return { ...this.health, offset: this.offset ?? null };
  }

  async run(): Promise<void> {
    this.offset = this.storedOffset();
    const { api } = this.parts;
    try {
      while (!this.signal.aborted) {
        let updates: unknown;
        // "polling" only while no failure is unanswered: a 409 loop must not look healthy.
        this.health.state = this.health.failures === 0 ? 'polling' : 'retrying';
        try {
          updates = await api.getUpdates(
            { timeoutS: this.options.pollTimeoutS, ...(this.offset !== undefined ? { offset: this.offset } : {}) },
            this.signal,
          );
          if (!Array.isArray(updates)) throw new BotApiError('getUpdates answered something other than a list');
        } catch (err) {
          if (this.signal.aborted) break;
          await this.failed(err);
          continue;
        }
        this.health.state = 'polling';
        this.health.last_ok = new Date().toISOString();
        this.health.failures = 0;
        this.health.retry_at = null;
        if (!(await this.handleAll(updates))) break;
      }
    } finally {
      this.health.state = 'stopped';
      this.health.retry_at = null;
    }
  }

  /** Handles a batch in order; false when the loop must end (the hall stops). */
  private async handleAll(updates: unknown[]): Promise<boolean> {
    for (const update of updates) {
      // What is not handled now is not confirmed either: Telegram delivers it to the next hall.
      if (this.signal.aborted) return false;
      let handled: 'done' | 'again';
      try {
        handled = await this.handler.handle(update);
      } catch (err) {
        handled = 'done';
        this.services.publish({
          type: 'telegram.update_error',
          bot: this.parts.bot.name,
          update_id: updateIdOf(update),
          error: errorMessage(err),
        });
      }
      if (handled === 'again') return false;
      const id = updateIdOf(update);
      if (id !== null && (this.offset === undefined || id + 1 > this.offset)) {
        this.offset = id + 1;
        await this.saveOffset();
      }
    }
    return true;
  }

  private async failed(err: unknown): Promise<void> {
    const failure: ApiFailure = err instanceof BotApiError ? err : { description: errorMessage(err) };
    const aborted = err instanceof BotApiError && err.aborted;
    const error = aborted ? 'getUpdates did not answer in time' : failure.description;
    this.health.failures++;
    const delay = pollRetryDelay(failure, this.health.failures, this.options.backoff);
    const at = Date.now();
    this.health.state = 'retrying';
    this.health.last_error = { at: new Date(at).toISOString(), error, ...(failure.status !== undefined ? { status: failure.status } : {}) };
    this.health.retry_at = new Date(at + delay).toISOString();
    this.services.publish({
      type: 'telegram.poll_error',
      bot: this.parts.bot.name,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
      error,
    });
    if (isBadToken(failure) && this.health.failures === 1) {
      this.services.log(
        `Telegram bot ${this.parts.bot.name}: the token was not accepted (${failure.status}); retrying every ${Math.round(delay / 1000)} s`,
      );
    }
    await sleep(delay, this.signal).catch(() => {});
  }

  private storedOffset(): number | undefined {
    const stored = this.services.store.state.get(TELEGRAM_NS, this.parts.bot.name) as Partial<StoredOffset> | undefined;
    // An offset of another token (the bot name now holds a different bot) would skip that bot's messages.
    if (!stored || stored.bot_id !== this.parts.botId || typeof stored.offset !== 'number') return undefined;
    return stored.offset;
  }

  private async saveOffset(): Promise<void> {
    if (this.offset === undefined) return;
    const value: StoredOffset = { bot_id: this.parts.botId, offset: this.offset };
    try {
      this.services.store.apply({ op: 'set', ns: TELEGRAM_NS, key: this.parts.bot.name, value });
      await this.services.store.commit();
    } catch (err) {
      // Missions are recorded by their own ids: a repeat after a restart is recognised while it waits or runs.
      this.services.log(`Telegram bot ${this.parts.bot.name}: cannot record the update offset: ${errorMessage(err)}`);
    }
  }
}

function updateIdOf(update: unknown): number | null {
  const id = (update as { update_id?: unknown } | null)?.update_id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : null;
}
