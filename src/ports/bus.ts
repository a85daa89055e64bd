/**
 * The event bus as the hall's faces see it: they publish their own events
 * and subscribe to the hall's. adapters/control/event-bus.ts implements it.
 */
import type { BusEvent } from '../machines/hall-effects.js';

/** An event as subscribers get it: the event and the bus's own fields. */
export type Envelope = BusEvent & {
  version: number;
  seq: number;
  time: number;
  ts: number;
};

/** The envelope of one type of event. */
export type EnvelopeOf<T extends Envelope['type']> = Extract<Envelope, { type: T }>;

interface SubscriberBase {
  filter: string;
  /** Bytes written but not yet sent; a subscriber over the limit is dropped. */
  backlog?(): number;
  drop?(reason: string): void;
}

/** A subscriber that passes events on as text (a socket, the dashboard's stream). */
export interface LineSubscriber extends SubscriberBase {
  /** Takes one encoded line (with its newline) and the decoded envelope. */
  deliver(line: string, event: Envelope): void;
}

/** A subscriber inside the hall that reads the events: no line is rendered for it. */
export interface EnvelopeSubscriber extends SubscriberBase {
  receive(event: Envelope): void;
}

export type BusSubscriber = LineSubscriber | EnvelopeSubscriber;

export interface EventBus {
  /** Returns the unsubscribe. */
  subscribe(subscriber: BusSubscriber): () => void;
  /** Hears subscribers come and go (the inspection stream starts work only while someone watches). */
  watchSubscribers(watch: (subscriber: BusSubscriber, joined: boolean) => void): void;
  /** True when some subscriber would get events of `type`. */
  wants(type: string): boolean;
  publish(event: BusEvent): Envelope;
  subscriberCount(): number;
}
