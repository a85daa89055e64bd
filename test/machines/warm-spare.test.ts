/**
 * One warm bridge's lifecycle as its machine decides it (docs/agents.md, "Warm bridges"), on a manual
 * clock: each transition and each delay, by the effects it emits and when.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { EARLY_END_MS } from '../../src/domain/warm-retry.js';
import { REFILL_AFTER_MS, RESERVED_MS, type WarmSpareEvent, warmSpareMachine } from '../../src/machines/warm-spare.machine.js';
import { ManualClock } from '../support/manual-clock.js';

const IDLE_MS = 30_000;

/** A spare's machine under a manual clock, its effects recorded as `TYPE[ how|code] @ms`. */
function spare() {
  const clock = new ManualClock();
  const actor = createActor(warmSpareMachine, { input: { idleMs: IDLE_MS }, clock });
  const effects: string[] = [];
  actor.on('*', (e) => {
    const detail = e.type === 'ended' ? ` ${e.how}` : e.type === 'exitSaid' ? ` ${e.code}` : '';
    effects.push(`${e.type}${detail} @${clock.now()}`);
  });
  actor.start();
  const send = (...events: WarmSpareEvent['type'][]) => {
    for (const type of events) actor.send(type === 'said' ? { type, code: 3 } : { type });
  };
  const state = () => actor.getSnapshot().value;
  const done = () => actor.getSnapshot().status === 'done';
  return { clock, actor, effects, send, state, done };
}

/** A spare ready and taken at time 0. */
function taken() {
  const s = spare();
  s.send('spawned', 'ready', 'take');
  s.effects.length = 0;
  return s;
}

describe('a warm spare starting', () => {
  it('is ready at its word, and only then; an exit code said before it is handed is no one’s', () => {
    const s = spare();
    s.send('spawned', 'said');
    expect(s.state()).toBe('starting');
    s.send('ready');
    expect(s.state()).toEqual({ ready: 'fresh' });
    s.send('ready', 'said');
    expect(s.effects).toEqual(['readied @0']);
  });

  it('cannot be taken or handed a run before it is ready', () => {
    const s = spare();
    expect(s.actor.getSnapshot().can({ type: 'take' })).toBe(false);
    s.send('take', 'handed', 'release');
    expect(s.state()).toBe('starting');
  });

  it('that ends is a failed start', () => {
    const s = spare();
    s.send('spawned', 'exited');
    expect(s.effects).toEqual(['ended failedStart @0']);
    expect(s.done()).toBe(true);
  });

  it('is told to end at the hall stop, and again once its pid is known', () => {
    const s = spare();
    s.send('close');
    expect(s.effects).toEqual(['tellToEnd @0']);
    s.send('spawned');
    expect(s.effects).toEqual(['tellToEnd @0', 'tellToEnd @0']);
    s.send('exited');
    expect(s.effects.at(-1)).toBe('ended byHall @0');
  });
});

describe('which spares an entry keeps', () => {
  it('counts one starting or ready as unused, and no longer once it is taken, handed or ending', () => {
    const unused = (s: ReturnType<typeof spare>) => s.actor.getSnapshot().hasTag('unused');
    const s = spare();
    expect(unused(s)).toBe(true);
    s.send('spawned', 'ready');
    expect(unused(s)).toBe(true);
    s.send('take');
    expect(unused(s)).toBe(false);
    s.send('handed');
    expect(unused(s)).toBe(false);
    const idle = spare();
    idle.send('spawned', 'close');
    expect(unused(idle)).toBe(false);
  });
});

describe('a warm spare ready and unused', () => {
  it('is ended after its idle time, not a millisecond sooner; its end is the hall’s', () => {
    const s = spare();
    s.send('spawned', 'ready');
    s.clock.advance(IDLE_MS - 1);
    expect(s.effects).toEqual(['readied @0']);
    s.clock.advance(1);
    expect(s.effects).toEqual(['readied @0', `tellToEnd @${IDLE_MS}`]);
    s.send('take');
    expect(s.state()).toBe('ending');
    s.send('exited');
    expect(s.effects.at(-1)).toBe(`ended byHall @${IDLE_MS}`);
    expect(s.done()).toBe(true);
  });

  it('that ends by itself sooner than EARLY_END_MS after its word is a failed start', () => {
    const s = spare();
    s.send('spawned', 'ready');
    s.clock.advance(EARLY_END_MS - 1);
    s.send('exited');
    expect(s.effects.at(-1)).toBe(`ended earlyEnd @${EARLY_END_MS - 1}`);
  });

  it('that ends by itself EARLY_END_MS after its word or later is replaced at once', () => {
    const s = spare();
    s.send('spawned', 'ready');
    s.clock.advance(EARLY_END_MS);
    s.send('exited');
    expect(s.effects.at(-1)).toBe(`ended replace @${EARLY_END_MS}`);
  });

  it('is told to end at the hall stop', () => {
    const s = spare();
    s.send('spawned', 'ready', 'close');
    expect(s.effects).toEqual(['readied @0', 'tellToEnd @0']);
  });
});

describe('a warm spare taken', () => {
  it('owes its replacement REFILL_AFTER_MS after the take, not sooner, and once', () => {
    const s = taken();
    s.clock.advance(REFILL_AFTER_MS - 1);
    expect(s.effects).toEqual([]);
    s.clock.advance(1);
    expect(s.effects).toEqual([`fill @${REFILL_AFTER_MS}`]);
    s.send('handed', 'runEnded');
    expect(s.effects).toEqual([`fill @${REFILL_AFTER_MS}`]);
  });

  it('is ended RESERVED_MS after the take when no run was handed to it, not a millisecond sooner', () => {
    const s = taken();
    s.clock.advance(RESERVED_MS - 1);
    expect(s.effects).toEqual([`fill @${REFILL_AFTER_MS}`]);
    s.clock.advance(1);
    expect(s.effects).toEqual([`fill @${REFILL_AFTER_MS}`, `tellToEnd @${RESERVED_MS}`]);
    s.send('exited');
    expect(s.effects.at(-1)).toBe(`ended byHall @${RESERVED_MS}`);
  });

  it('released, is ended; its replacement is still owed at REFILL_AFTER_MS until its end starts one', () => {
    const s = taken();
    s.send('release');
    expect(s.effects).toEqual(['tellToEnd @0']);
    s.clock.advance(REFILL_AFTER_MS);
    expect(s.effects).toEqual(['tellToEnd @0', `fill @${REFILL_AFTER_MS}`]);

    const t = taken();
    t.send('release', 'exited');
    t.clock.advance(REFILL_AFTER_MS);
    expect(t.effects).toEqual(['tellToEnd @0', 'ended byHall @0']);
  });

  it('that ends by itself unhanded is replaced at once (a run took it), and owes nothing more', () => {
    const s = taken();
    s.send('exited');
    s.clock.advance(RESERVED_MS);
    expect(s.effects).toEqual(['ended replace @0']);
  });

  it('at the hall stop is ended and owes no replacement', () => {
    const s = taken();
    s.send('close');
    s.clock.advance(REFILL_AFTER_MS);
    expect(s.effects).toEqual(['tellToEnd @0']);
  });

  it('cannot be taken again; only it can be handed a run', () => {
    const s = taken();
    expect(s.actor.getSnapshot().can({ type: 'take' })).toBe(false);
    expect(s.actor.getSnapshot().can({ type: 'handed' })).toBe(true);
  });
});

describe('a warm spare handed a run', () => {
  it('whose run ends within REFILL_AFTER_MS starts its replacement then, and not again', () => {
    const s = taken();
    s.send('handed');
    s.clock.advance(REFILL_AFTER_MS - 1);
    s.send('runEnded');
    expect(s.effects).toEqual([`fill @${REFILL_AFTER_MS - 1}`]);
    s.clock.advance(RESERVED_MS);
    expect(s.effects).toEqual([`fill @${REFILL_AFTER_MS - 1}`]);
  });

  it('is not ended after RESERVED_MS nor by a release: it is its run’s', () => {
    const s = taken();
    s.send('handed', 'release');
    s.clock.advance(RESERVED_MS);
    expect(s.effects).toEqual([`fill @${REFILL_AFTER_MS}`]);
    expect(s.state()).toEqual({ handed: 'running' });
  });

  it('ends its run at its word; its exit after tells no one', () => {
    const s = taken();
    s.send('handed', 'said');
    expect(s.effects).toEqual(['exitSaid 3 @0']);
    s.send('said', 'exited');
    expect(s.effects).toEqual(['exitSaid 3 @0']);
  });

  it('that exits without a word ends its run by that exit', () => {
    const s = taken();
    s.send('handed', 'exited', 'said');
    expect(s.effects).toEqual(['runExit @0']);
  });

  it('gone, lives on until its replacement is started, at REFILL_AFTER_MS or at its run’s end', () => {
    const s = taken();
    s.send('handed', 'exited');
    expect(s.done()).toBe(false);
    s.clock.advance(REFILL_AFTER_MS);
    expect(s.effects).toEqual(['runExit @0', `fill @${REFILL_AFTER_MS}`]);
    expect(s.done()).toBe(true);

    const t = taken();
    t.send('handed', 'exited', 'runEnded');
    expect(t.effects).toEqual(['runExit @0', 'fill @0']);
    expect(t.done()).toBe(true);
  });

  it('at the hall stop is left to its run and owes no replacement', () => {
    const s = taken();
    s.send('handed', 'close');
    s.clock.advance(REFILL_AFTER_MS);
    s.send('exited');
    expect(s.effects).toEqual([`runExit @${REFILL_AFTER_MS}`]);
    expect(s.done()).toBe(true);

    const t = taken();
    t.send('handed', 'exited', 'close');
    expect(t.done()).toBe(true);
    expect(t.effects).toEqual(['runExit @0']);
  });
});
