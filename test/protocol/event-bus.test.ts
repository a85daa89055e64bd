import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/adapters/control/event-bus.js';
import type { Envelope } from '../../src/ports/bus.js';
import { raiderDone } from '../support/bus-events.js';
import type { BusEvent } from '../../src/protocol/events.js';

describe('the event bus', () => {
  it('wraps each event in its envelope and writes it as one line with sorted keys', () => {
    const bus = new EventBus(
      () => undefined,
      () => 1_700_000_000_250,
    );
    const lines: string[] = [];
    const envelopes: Envelope[] = [];
    bus.subscribe({
      filter: 'raider.',
      deliver: (line, event) => {
        lines.push(line);
        envelopes.push(event);
      },
    });
    const event: BusEvent = { type: 'raider.queued', slot: '1q', queue_depth: 2, mission_id: 'm1' };
    bus.publish(event);
    bus.nameHall('h1');
    bus.publish({ type: 'raider.queued', slot: '1q', queue_depth: 3, mission_id: 'm2' });
    bus.publish({ type: 'raider.queued', slot: '1q', queue_depth: 4, mission_id: 'm3', hall: 'h2' });
    expect(lines).toEqual([
      '{"mission_id":"m1","queue_depth":2,"seq":1,"slot":"1q","time":1700000000.25,"ts":1700000000,"type":"raider.queued","version":1}\n',
      '{"hall":"h1","mission_id":"m2","queue_depth":3,"seq":2,"slot":"1q","time":1700000000.25,"ts":1700000000,"type":"raider.queued","version":1}\n',
      '{"hall":"h2","mission_id":"m3","queue_depth":4,"seq":3,"slot":"1q","time":1700000000.25,"ts":1700000000,"type":"raider.queued","version":1}\n',
    ]);
    // The event's own fields first, then the hall's, then the envelope's; the event itself is left as it was.
    expect(Object.keys(envelopes[1] ?? {})).toEqual(['type', 'slot', 'queue_depth', 'mission_id', 'hall', 'version', 'seq', 'time', 'ts']);
    expect(event).toEqual({ type: 'raider.queued', slot: '1q', queue_depth: 2, mission_id: 'm1' });
  });

  it('renders the line only when a subscriber takes it as text', () => {
    const bus = new EventBus(() => undefined);
    let renders = 0;
    // Written through its toJSON (as a Date is), which counts the renders.
    const probe = new (class {
      toJSON() {
        return `render ${++renders}`;
      }
    })();
    const received: Envelope[] = [];
    const off = bus.subscribe({ filter: '', receive: (event) => received.push(event) });
    bus.publish(raiderDone('bjorn-1', { response: probe }));
    expect(received.map((e) => e.seq)).toEqual([1]);
    expect(renders).toBe(0);
    const lines: string[] = [];
    bus.subscribe({ filter: '', deliver: (line) => lines.push(line) });
    bus.subscribe({ filter: '', deliver: (line) => lines.push(line) });
    off();
    bus.publish(raiderDone('bjorn-2', { response: probe }));
    // Once for both text subscribers.
    expect(renders).toBe(1);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(lines[1]);
    expect(received).toHaveLength(1);
  });
});
