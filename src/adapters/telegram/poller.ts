/**
 * The hall's own getUpdates loop for one bot: one long
 * poll at a time, aborted when the hall stops; updates handled one after the
 * other; the offset past an update persisted only once the update is done
 * with (its mission durably taken by the hall), so a restart neither loses
 * nor repeats a message. Failures are published as `telegram.poll_error` and
 * waited out as pollRetryDelay says; the loop never spins and never gives up.
 *
 * On a shared cluster one hall at a time polls a bot: the one that holds the
 * role `telegram:BOT` in the database (held while its lease lives). The
 * others stand by and ask again every second; the one that takes over reads
 * the offset the last poller wrote. A poller checks it still holds the role
 * before it handles a batch, and writes the offset only while it does.
 */
import { z } from 'zod';
import type { HallServices } from '../../ports/hall-services.js';
import type { ClusterFaces } from '../../ports/cluster-faces.js';
import { isBadToken, pollRetryDelay, type ApiFailure, type PollBackoff } from '../../domain/telegram-retry.js';
import { BotApiError, type BotParts } from './bot-api.js';
import { sleep } from './sender.js';
import type { UpdateHandler } from './update-handler.js';
import { errorMessage } from '../../domain/error-message.js';
import { definedFields } from '../../domain/defined-fields.js';

export const TELEGRAM_NS = 'telegram';
/** How often a hall of a shared cluster that does not poll a bot asks whether its poller is still alive. */
export const STANDBY_POLL_MS = 1_000;

export interface PollHealth {
  /** `standby`: another hall of the shared cluster polls this bot. */
  state: 'starting' | 'polling' | 'retrying' | 'standby' | 'stopped';
  /** The last getUpdates that answered. */
  last_ok: string | null;
  last_error: { at: string; error: string; status?: number } | null;
  /** Failures in a row. */
  failures: number;
  retry_at: string | null;
  /** The next update id asked for. */
  offset: number | null;
}

/** A bot's update offset as the `telegram` namespace keeps it; read back through this schema. */
const StoredOffsetSchema = z.object({ bot_id: z.string(), offset: z.number() });
type StoredOffset = z.infer<typeof StoredOffsetSchema>;

export class BotPoller {
  private offset: number | undefined;
  /** On a shared cluster: whether this hall held the bot's poller role at the last look. */
  private polling = false;
  /** On a shared cluster: the last failure to ask the database about the role (logged once). */
  private clusterProblem: string | null = null;
  private readonly health: PollHealth = { state: 'starting', last_ok: null, last_error: null, failures: 0, retry_at: null, offset: null };

  constructor(
    private readonly services: HallServices,
    private readonly parts: BotParts,
    private readonly handler: UpdateHandler,
    private readonly options: { pollTimeoutS: number; backoff: PollBackoff },
    private readonly signal: AbortSignal,
    /** On a shared cluster: hears this hall take the bot's poller role, or lose it. */
    private readonly onRole: (held: boolean) => void = () => {},
  ) {}

  /** Whether this hall takes the bot's updates: always on a hall alone, while it holds the poller role on a shared cluster. */
  polls(): boolean {
    return this.services.store.shared === undefined || this.polling;
  }

  status(): PollHealth {
    return { ...this.health, offset: this.offset ?? null };
  }

  async run(): Promise<void> {
    const faces = this.services.store.shared?.faces;
    this.offset = faces ? undefined : this.storedOffset(this.services.store.state.get(TELEGRAM_NS, this.parts.bot.name));
    const { api } = this.parts;
    try {
      while (!this.signal.aborted) {
        if (faces && !(await this.ownsBot(faces))) {
          await sleep(STANDBY_POLL_MS, this.signal).catch(() => {});
          continue;
        }
        let updates: unknown;
        // "polling" only while no failure is unanswered: a 409 loop must not look healthy.
        this.health.state = this.health.failures === 0 ? 'polling' : 'retrying';
        try {
          updates = await api.getUpdates({ timeoutS: this.options.pollTimeoutS, ...definedFields({ offset: this.offset }) }, this.signal);
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
        // A hall that stalled through its long poll may have been replaced meanwhile: the new poller has these.
        if (faces && updates.length > 0 && !(await this.ownsBot(faces))) continue;
        const handled = await this.handleAll(updates, faces);
        if (handled === 'stop') break;
      }
    } finally {
      this.health.state = 'stopped';
      this.health.retry_at = null;
    }
  }

  /** The role of this bot's poller in a shared cluster: taken or kept; on taking it, the offset is the cluster's. */
  private async ownsBot(faces: ClusterFaces): Promise<boolean> {
    let held: boolean;
    try {
      held = await faces.holdRole(this.role());
      if (held && !this.polling) this.offset = this.storedOffset(await faces.readFact(TELEGRAM_NS, this.parts.bot.name));
      this.clusterProblem = null;
    } catch (err) {
      // Once per different problem: a database that is away would otherwise fill the log every second.
      const problem = `Telegram bot ${this.parts.bot.name}: cannot ask the cluster who polls it: ${errorMessage(err)}`;
      if (problem !== this.clusterProblem) this.services.log(problem);
      this.clusterProblem = problem;
      held = false;
    }
    const changed = held !== this.polling;
    if (changed)
      this.services.log(`Telegram bot ${this.parts.bot.name}: ${held ? 'this hall polls it now' : 'this hall no longer polls it'}`);
    this.polling = held;
    if (changed) this.onRole(held);
    if (!held) {
      this.health.state = 'standby';
      this.health.retry_at = null;
    }
    return held;
  }

  private role(): string {
    return `telegram:${this.parts.bot.name}`;
  }

  /** Handles a batch in order; `stop` when the loop must end (the hall stops), `lost` when another hall polls now. */
  private async handleAll(updates: unknown[], faces: ClusterFaces | undefined): Promise<'ok' | 'stop' | 'lost'> {
    for (const update of updates) {
      // What is not handled now is not confirmed either: Telegram delivers it to the next hall.
      if (this.signal.aborted) return 'stop';
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
      if (handled === 'again') return 'stop';
      const id = updateIdOf(update);
      if (id !== null && (this.offset === undefined || id + 1 > this.offset)) {
        this.offset = id + 1;
        if (!(await this.saveOffset(faces))) return 'lost';
      }
    }
    return 'ok';
  }

  private async failed(err: unknown): Promise<void> {
    const failure: ApiFailure = err instanceof BotApiError ? err : { description: errorMessage(err) };
    const aborted = err instanceof BotApiError && err.aborted;
    const error = aborted ? 'getUpdates did not answer in time' : failure.description;
    this.health.failures++;
    const delay = pollRetryDelay(failure, this.health.failures, this.options.backoff);
    const at = Date.now();
    this.health.state = 'retrying';
    this.health.last_error = { at: new Date(at).toISOString(), error, ...definedFields({ status: failure.status }) };
    this.health.retry_at = new Date(at + delay).toISOString();
    this.services.publish({
      type: 'telegram.poll_error',
      bot: this.parts.bot.name,
      ...definedFields({ status: failure.status }),
      error,
    });
    if (isBadToken(failure) && this.health.failures === 1) {
      this.services.log(
        `Telegram bot ${this.parts.bot.name}: the token was not accepted (${failure.status}); retrying every ${Math.round(delay / 1000)} s`,
      );
    }
    await sleep(delay, this.signal).catch(() => {});
  }

  private storedOffset(stored: unknown): number | undefined {
    const read = StoredOffsetSchema.safeParse(stored);
    // An offset of another token (the bot name now holds a different bot) would skip that bot's messages.
    if (!read.success || read.data.bot_id !== this.parts.botId) return undefined;
    return read.data.offset;
  }

  /** Records the offset; false when, on a shared cluster, another hall polls the bot now (nothing written). */
  private async saveOffset(faces: ClusterFaces | undefined): Promise<boolean> {
    if (this.offset === undefined) return true;
    const value: StoredOffset = { bot_id: this.parts.botId, offset: this.offset };
    try {
      if (faces) {
        if (await faces.writeFactHolding(this.role(), TELEGRAM_NS, this.parts.bot.name, value)) return true;
        this.services.log(`Telegram bot ${this.parts.bot.name}: another hall polls it now; this one stops handling its updates`);
        this.polling = false;
        this.onRole(false);
        return false;
      }
      this.services.store.apply({ op: 'set', ns: TELEGRAM_NS, key: this.parts.bot.name, value });
      await this.services.store.commit();
    } catch (err) {
      // Missions are recorded by their own ids: a repeat after a restart is recognised while it waits or runs.
      this.services.log(`Telegram bot ${this.parts.bot.name}: cannot record the update offset: ${errorMessage(err)}`);
    }
    return true;
  }
}

function updateIdOf(update: unknown): number | null {
  const id = (update as { update_id?: unknown } | null)?.update_id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : null;
}
