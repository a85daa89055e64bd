/**
 * The event bus (envelope version 1): every event gets
 * `version`, `seq` (1, 2, 3 ... per hall process), `time` (float epoch
 * seconds) and `ts` (its whole seconds), is encoded once as one line of JSON
 * with sorted keys, and goes to each subscriber whose filter is a prefix of
 * its type.
 *
 * A subscriber that stops reading is dropped once its unsent output passes a
 * bound, with the reason logged, so it never stalls the others or the hall.
 */
import { canonicalJson } from '../../protocol/canonical-json.js';
import type { BusEvent } from '../../machines/hall-effects.js';
import type { BusSubscriber, Envelope, EventBus as EventBusContract } from '../../ports/bus.js';
import { ENVELOPE_VERSION } from '../../protocol/events.js';
import { errorMessage } from '../../domain/error-message.js';
/**
 * The actor-inspection stream (`raider hall inspect`) is busy and of interest
 * to few: its events go only to subscribers that ask for them by name.
 */
export const INSPECT_PREFIX = 'inspect.';

export function filterMatches(filter: string, type: string): boolean {
  if (!type.startsWith(filter)) return false;
  return !type.startsWith(INSPECT_PREFIX) || filter.startsWith('inspect');
}
/** Unsent bytes a socket subscriber may hold before it is dropped. */
export const SUBSCRIBER_BUFFER_LIMIT = 8 * 1024 * 1024;

export class EventBus implements EventBusContract {
  private seq = 0;
  private readonly subscribers = new Set<BusSubscriber>();
  private readonly watchers = new Set<(subscriber: BusSubscriber, joined: boolean) => void>();

  constructor(
    private readonly warn: (message: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  subscribe(subscriber: BusSubscriber): () => void {
    this.subscribers.add(subscriber);
    for (const watch of this.watchers) watch(subscriber, true);
    return () => this.remove(subscriber);
  }

  /** Hears subscribers come and go (the inspection stream starts work only while someone watches). */
  watchSubscribers(watch: (subscriber: BusSubscriber, joined: boolean) => void): void {
    this.watchers.add(watch);
  }

  /** True when some subscriber would get events of `type`. */
  wants(type: string): boolean {
    for (const sub of this.subscribers) if (filterMatches(sub.filter, type)) return true;
    return false;
  }

  private remove(subscriber: BusSubscriber): void {
    if (!this.subscribers.delete(subscriber)) return;
    for (const watch of this.watchers) watch(subscriber, false);
  }

  /** In a shared cluster every event names its hall: this one's, unless it came from another. */
  private hall: string | null = null;

  nameHall(hall: string): void {
    this.hall = hall;
  }

  publish(event: BusEvent): Envelope {
    const ms = this.now();
    const time = ms / 1000;
    const hall = this.hall !== null && event.hall === undefined ? { hall: this.hall } : undefined;
    // Object.assign, not a literal that spreads the event: on Node 20 every field a literal adds after
    // a spread takes a slow path, ~10 us for an envelope (profiled: 4% of a queued spawn's hall CPU).
    const envelope: Envelope = Object.assign({}, event, hall, { version: ENVELOPE_VERSION, seq: ++this.seq, time, ts: Math.floor(time) });
    if (this.subscribers.size === 0) return envelope;
    // Rendered once, and only when a subscriber takes it as text: a burst that only the hall's own
    // faces follow (ACP's subscriber is always there) pays no JSON per event.
    let line: string | null = null;
    // A copy: a subscriber added while delivering gets the next event, not this one.
    for (const sub of [...this.subscribers]) {
      if (!filterMatches(sub.filter, event.type)) continue;
      if (sub.backlog && sub.backlog() > SUBSCRIBER_BUFFER_LIMIT) {
        this.remove(sub);
        const reason = `event subscriber dropped: more than ${SUBSCRIBER_BUFFER_LIMIT} bytes unread`;
        this.warn(reason);
        sub.drop?.(reason);
        continue;
      }
      try {
        if ('receive' in sub) sub.receive(envelope);
        else {
          line ??= `${canonicalJson(envelope)}\n`;
          sub.deliver(line, envelope);
        }
      } catch (err) {
        this.warn(`event subscriber failed on ${event.type}: ${errorMessage(err)}`);
      }
    }
    return envelope;
  }

  subscriberCount(): number {
    return this.subscribers.size;
  }
}
