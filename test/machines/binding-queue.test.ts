import { describe, expect, it } from 'vitest';
import { createActor, setup, type AnyEventObject } from 'xstate';
import { bindingQueueMachine } from '../../src/machines/binding-queue.machine.js';
import { startHall } from './hall-harness.js';

/** Runs the binding queue machine under a parent that records what it reports. */
function bindingUnderTest(queue: { id: string; name: string; mission: string; binding: string }[] = []) {
  const reports: AnyEventObject[] = [];
  const parent = setup({ actors: { bq: bindingQueueMachine } }).createMachine({
    invoke: { id: 'bq', src: 'bq', input: { binding: 'telegram:ops:42', queue } },
    on: { '*': { actions: ({ event }) => reports.push(event) } },
  });
  const actor = createActor(parent).start();
  const bq = actor.getSnapshot().children.bq!;
  return { bq, reports, state: () => bq.getSnapshot().value };
}

const m = (id: string) => ({ id, name: 'bjorn', mission: id, binding: 'telegram:ops:42' });

describe('binding queue machine', () => {
  it('passes the first mission on, queues the rest while the binding is reserved or occupied', () => {
    const { bq, reports, state } = bindingUnderTest();
    bq.send({ type: 'binding.submit', entry: m('a'), at: 1 });
    expect(state()).toBe('reserved');
    bq.send({ type: 'binding.submit', entry: m('b'), at: 2, reqId: 'r2' });
    bq.send({ type: 'binding.started', runId: 'bjorn-1' });
    expect(state()).toBe('occupied');
    bq.send({ type: 'binding.submit', entry: m('c'), at: 3 });
    expect(reports.map((r) => [r.type, r.entry?.id, r.depth])).toEqual([
      ['binding.pass', 'a', undefined],
      ['binding.queued', 'b', 1],
      ['binding.queued', 'c', 2],
    ]);
    // Another run's end does not free it.
    bq.send({ type: 'binding.ended', runId: 'other-1', at: 4 });
    expect(state()).toBe('occupied');
    bq.send({ type: 'binding.ended', runId: 'bjorn-1', at: 5 });
    expect(state()).toBe('reserved');
    expect(reports.at(-1)).toMatchObject({ type: 'binding.pass', entry: { id: 'b' }, at: 5 });
  });

  it('when the passed mission waits in a busy slot, the next one follows it there, in order', () => {
    const { bq, reports, state } = bindingUnderTest([m('a'), m('b')]);
    bq.send({ type: 'binding.drain', at: 10 });
    bq.send({ type: 'binding.waiting', at: 11 });
    bq.send({ type: 'binding.waiting', at: 12 });
    expect(state()).toBe('free');
    expect(reports.filter((r) => r.type === 'binding.pass').map((r) => r.entry.id)).toEqual(['a', 'b']);
  });

  it('an offer from a slot is accepted when free and taken into the queue when busy', () => {
    const { bq, reports } = bindingUnderTest();
    bq.send({ type: 'binding.offer', entry: m('a'), slot: '1bjorn', at: 1 });
    bq.send({ type: 'binding.offer', entry: m('b'), slot: '1ivar', at: 2 });
    expect(reports.map((r) => [r.type, r.slot ?? r.fromSlot])).toEqual([
      ['binding.offerAccepted', '1bjorn'],
      ['binding.queued', '1ivar'],
    ]);
  });

  it('drop empties the queue and stop ends passing', () => {
    const { bq, reports, state } = bindingUnderTest([m('a'), m('b')]);
    bq.send({ type: 'binding.stop' });
    bq.send({ type: 'binding.drain', at: 1 });
    expect(state()).toBe('free');
    bq.send({ type: 'binding.drop' });
    expect(reports).toEqual([{ type: 'binding.dropped', binding: 'telegram:ops:42', entries: [m('a'), m('b')], reason: 'binding_closed' }]);
  });
});

describe('bindings through the hall', () => {
  it('two quick missions of one chat run one after the other in the binding session', async () => {
    const h = startHall({ sessions: { 'telegram:ops:42': 'S1' } });
    h.boot();
    const r1 = h.spawn('bjorn', 'first', { binding: 'telegram:ops:42' });
    const r2 = h.spawn('bjorn', 'second', { binding: 'telegram:ops:42' });
    await h.settle();
    expect(h.started()).toEqual(['first']);
    expect(h.reply(r1)?.body).toMatchObject({ session: 'S1', binding: 'telegram:ops:42' });
    expect(h.reply(r2)?.body).toEqual({
      queued: 1,
      slot: 'bjorn',
      binding: 'telegram:ops:42',
      queue_depth: 1,
      position: 1,
      mission_id: 'm2',
    });
    await h.complete('first');
    expect(h.started()).toEqual(['first', 'second']);
    expect(h.world.prepared.map((p) => p.session)).toEqual(['S1', 'S1']);
    expect(h.bus('raider.done')[0]).toMatchObject({ session: 'S1', binding: 'telegram:ops:42' });
  });

  it('a mission pulled from a slot queue whose binding is busy moves to the binding queue', async () => {
    const h = startHall();
    h.boot();
    h.spawn('1bjorn', 'hold'); // occupies 1bjorn
    h.spawn('bjorn', 'chat-1', { binding: 'cron:x' }); // occupies cron:x in the plain slot
    h.spawn('1bjorn', 'chat-2', { binding: 'cron:x' }); // binding busy: waits in cron:x's queue
    await h.settle();
    expect(h.started()).toEqual(['hold', 'chat-1']);
    await h.complete('chat-1');
    // chat-2 was passed to 1bjorn, which is busy: it waits in the slot queue now.
    expect(h.bus('raider.queued').map((e) => [e.slot, e.binding])).toEqual([
      ['1bjorn', 'cron:x'],
      ['1bjorn', undefined],
    ]);
    h.spawn('bjorn', 'chat-3', { binding: 'cron:x' }); // binding free: starts at once
    await h.settle();
    expect(h.started()).toEqual(['hold', 'chat-1', 'chat-3']);
    await h.complete('hold');
    // chat-2 is offered, its binding is busy with chat-3: it moves to the binding queue.
    expect(
      h
        .storeOps()
        .filter((op) => op.op === 'queue')
        .map((op) => op.op === 'queue' && op.queue),
    ).toEqual([
      { kind: 'binding', binding: 'cron:x' },
      { kind: 'slot', slot: '1bjorn' },
      { kind: 'binding', binding: 'cron:x' },
    ]);
    await h.complete('chat-3');
    expect(h.started()).toEqual(['hold', 'chat-1', 'chat-3', 'chat-2']);
    expect(h.errors).toEqual([]);
  });

  it('session reset starts the binding over; an unknown binding is an error', async () => {
    const h = startHall({ sessions: { 'telegram:ops:42': 'S1' } });
    h.boot();
    h.hall.send({ type: 'cmd.sessionReset', reqId: 'a', binding: 'telegram:ops:42' });
    h.hall.send({ type: 'cmd.sessionReset', reqId: 'b', binding: 'telegram:ops:42' });
    expect(h.reply('a')?.body).toEqual({ reset: 1, binding: 'telegram:ops:42', session: 'S1' });
    expect(h.reply('b')?.body).toEqual({ error: 'no session bound to telegram:ops:42' });
    expect(h.bus('session.reset')).toEqual([{ type: 'session.reset', binding: 'telegram:ops:42', session: 'S1' }]);
    h.spawn('bjorn', 'fresh', { binding: 'telegram:ops:42' });
    await h.settle();
    expect(h.world.prepared[0]!.session).toBeUndefined();
  });

  it("drop_queued removes a binding's waiting missions from its queue and from slot queues", async () => {
    const h = startHall();
    h.boot();
    h.spawn('1bjorn', 'hold');
    h.spawn('1bjorn', 'p1', { binding: 'acp:acp-1' });
    h.spawn('bjorn', 'p2', { binding: 'acp:acp-2' });
    h.spawn('bjorn', 'p3', { binding: 'acp:acp-2' });
    await h.settle();
    h.hall.send({ type: 'cmd.dropQueued', binding: 'acp:acp-1' });
    h.hall.send({ type: 'cmd.dropQueued', binding: 'acp:acp-2' });
    expect(h.storeOps().filter((op) => op.op === 'remove')).toEqual([
      { op: 'remove', missionId: 'm2' },
      { op: 'remove', missionId: 'm4' },
    ]);
    await h.complete('hold');
    await h.complete('p2');
    expect(h.started()).toEqual(['hold', 'p2']);
  });
});
