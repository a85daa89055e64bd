/**
 * The event bus (seed 001 "EVENT BUS", envelope version 1): every event gets
 * `version`, `seq` (1, 2, 3 ... per hall process), `time` (float epoch
 * seconds) and `ts` (its whole seconds), is encoded once as one line of JSON
 * with sorted keys, and goes to each subscriber whose filter is a prefix of
 * its type.
 *
 * A subscriber that stops reading is dropped once its unsent output passes a
 * bound, with the reason logged, so it never stalls the others or the hall.
 */
import stringify from 'safe-stable-stringify';
import type { BusEvent } from '../../machines/hall-effects.js';

export const ENVELOPE_VERSION = 1;
/** Unsent bytes a socket subscriber may hold before it is dropped. */
export const SUBSCRIBER_BUFFER_LIMIT = 8 * 1024 * 1024;

export interface Envelope extends BusEvent {
  version: number;
  seq: number;
  time: number;
  ts: number;
}

export interface BusSubscriber {
  filter: string;
  /** Takes one encoded line (with its newline) and the decoded envelope. */
  deliver(line: string, event: Envelope): void;
  /** Bytes written but not yet sent; a subscriber over the limit is dropped. */
  backlog?(): number;
  drop?(reason: string): void;
}

export class EventBus {
  private seq = 0;
  private readonly subscribers = new Set<BusSubscriber>();

  constructor(
    private readonly warn: (message: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  subscribe(subscriber: BusSubscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  publish(event: BusEvent): Envelope {
    const ms = this.now();
    const time = ms / 1000;
    const envelope: Envelope = { ...event, version: ENVELOPE_VERSION, seq: ++this.seq, time, ts: Math.floor(time) };
    const line = `${stringify(envelope)}\n`;
    // A copy: a subscriber added while delivering gets the next event, not this one.
    for (const sub of [...this.subscribers]) {
      if (!event.type.startsWith(sub.filter)) continue;
      if (sub.backlog && sub.backlog() > SUBSCRIBER_BUFFER_LIMIT) {
        this.subscribers.delete(sub);
        const reason = `event subscriber dropped: more than ${SUBSCRIBER_BUFFER_LIMIT} bytes unread`;
        this.warn(reason);
        sub.drop?.(reason);
        continue;
      }
      try {
        sub.deliver(line, envelope);
      } catch (err) {
        this.warn(`event subscriber failed on ${event.type}: ${(err as Error).message}`);
      }
    }
    return envelope;
  }

  subscriberCount(): number {
    return this.subscribers.size;
  }
}
