/**
 * The inspection observer's watch of one actor (ports/actor-watching.ts),
 * on small XState machines: each state and event in order, and an actor
 * watched after it ended told so at once.
 */
import { describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { EventBus } from '../../src/adapters/control/event-bus.js';
import { ActorInspection } from '../../src/adapters/inspect/actor-inspection.js';
import type { ActorWatchMessage } from '../../src/protocol/actor-watch.js';

const door = createMachine({
  id: 'door',
  initial: 'shut',
  states: {
    shut: { on: { open: 'open' } },
    open: { on: { close: 'shut', lock: 'gone' } },
    gone: { type: 'final' },
  },
});

describe('watching one actor', () => {
  it('tells its snapshot, then each event and state in order, then its end', () => {
    const inspection = new ActorInspection(new EventBus(() => undefined), () => 1000);
    const actor = createActor(door, { id: 'door' });
    inspection.track(actor);
    actor.start();
    const heard: ActorWatchMessage[] = [];
    const off = inspection.watch('door', (m) => heard.push(m));
    expect(off).not.toBeNull();
    actor.send({ type: 'open' });
    actor.send({ type: 'lock' });
    expect(
      heard.map((m) => (m.type === 'actor.event' ? `event ${m.event}` : m.type === 'actor.stopped' ? 'stopped' : `${m.type} ${m.state}`)),
    ).toEqual(['actor.snapshot shut', 'event open', 'actor.state open', 'event lock', 'actor.state gone', 'stopped']);
    expect(heard[0]).toMatchObject({
      kind: 'door',
      states: ['shut'],
      status: 'active',
      events: [{ dir: 'received', event: 'xstate.init', time: 1000 }],
    });
  });

  it('tells an actor that already ended its last state and its end, and nothing after', () => {
    const inspection = new ActorInspection(new EventBus(() => undefined));
    const actor = createActor(door, { id: 'door' });
    inspection.track(actor);
    actor.start();
    actor.send({ type: 'open' });
    actor.send({ type: 'lock' });
    const heard: ActorWatchMessage[] = [];
    inspection.watch('door', (m) => heard.push(m));
    expect(heard.map((m) => m.type)).toEqual(['actor.snapshot', 'actor.stopped']);
    expect(heard[0]).toMatchObject({ state: 'gone', status: 'done' });
    expect(heard[0]?.type === 'actor.snapshot' ? heard[0].events.map((e) => e.event) : []).toEqual(['xstate.init', 'open', 'lock']);
  });

  it('answers null for an id it has no live actor of', () => {
    const inspection = new ActorInspection(new EventBus(() => undefined));
    expect(inspection.watch('nobody', () => undefined)).toBeNull();
  });
});
