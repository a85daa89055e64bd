import { describe, expect, it } from 'vitest';
import { HallGateway } from '../../src/actors/hall-gateway.js';
import { startHall } from './hall-harness.js';

describe('slots (hall + slot machines, simulated time)', () => {
  it('a plain name runs every mission at once', async () => {
    const h = startHall();
    h.boot();
    h.spawn('bjorn', 'a');
    h.spawn('bjorn', 'b');
    h.spawn('bjorn', 'c');
    await h.settle();
    expect(h.started()).toEqual(['a', 'b', 'c']);
    expect(h.bus('raider.queued')).toEqual([]);
  });

  it('a numbered name runs one at a time and starts the waiting ones in order', async () => {
    const h = startHall();
    h.boot();
    const r1 = h.spawn('1bjorn', 'a');
    const r2 = h.spawn('1bjorn', 'b');
    const r3 = h.spawn('1bjorn', 'c');
    await h.settle();
    expect(h.started()).toEqual(['a']);
    expect(h.reply(r1)?.body).toMatchObject({ slot: '1bjorn', binding: 'slot:1bjorn' });
    expect(h.reply(r2)?.body).toEqual({ queued: 1, slot: '1bjorn', queue_depth: 1, position: 1, mission_id: 'm2' });
    expect(h.reply(r3)?.body).toEqual({ queued: 1, slot: '1bjorn', queue_depth: 2, position: 2, mission_id: 'm3' });
    expect(h.bus('raider.queued').map((e) => e.queue_depth)).toEqual([1, 2]);
    await h.complete('a');
    expect(h.started()).toEqual(['a', 'b']);
    // A new mission while b runs waits behind c.
    h.spawn('1bjorn', 'd');
    await h.complete('b');
    await h.complete('c');
    await h.complete('d');
    expect(h.started()).toEqual(['a', 'b', 'c', 'd']);
    expect(h.bus('raider.done').map((e) => e.response)).toEqual(['done a', 'done b', 'done c', 'done d']);
    expect(h.errors).toEqual([]);
  });

  it('a spawn into a busy numbered slot is queued by the hall itself: held by the slot, then recorded, announced and answered', async () => {
    const h = startHall({ maxRunning: 5 });
    h.boot();
    h.spawn('1bjorn', 'a');
    await h.settle();
    const slot = h.hall.getSnapshot().context.slots['1bjorn'];
    expect(slot?.getSnapshot().value).toBe('busy');
    const before = h.emitted.length;
    let heldWhenRecorded: string[] = [];
    const off = h.hall.on('store', () => {
      heldWhenRecorded = [...(slot?.getSnapshot().context.queue ?? [])].map((m) => m.mission);
    });
    const r = h.spawn('1bjorn', 'b');
    off.unsubscribe();
    expect(heldWhenRecorded).toEqual(['b']);
    expect(h.emitted.slice(before)).toEqual([
      { type: 'store', op: { op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: { id: 'm2', mission: 'b', name: '1bjorn' } } },
      { type: 'bus', event: { type: 'raider.queued', slot: '1bjorn', queue_depth: 1, mission_id: 'm2' } },
      { type: 'reply', reqId: r, body: { mission_id: 'm2', position: 1, queue_depth: 1, queued: 1, slot: '1bjorn' } },
    ]);
    // A waiting mission takes no room under max_running: only a's run holds one.
    expect(h.hall.getSnapshot().context.tickets).toBe(1);
    await h.complete('a');
    expect(h.started()).toEqual(['a', 'b']);
    expect(h.errors).toEqual([]);
  });

  it('a mission the hall saw queued waits its turn in a slot that has gone idle since', async () => {
    const h = startHall();
    h.boot();
    h.spawn('1bjorn', 'a');
    await h.settle();
    await h.complete('a');
    const slot = h.hall.getSnapshot().context.slots['1bjorn'];
    expect(slot?.getSnapshot().value).toBe('idle');
    // What the hall sends when it read the slot busy and events before this one freed it.
    slot?.send({ type: 'slot.hold', entry: { id: 'm9', mission: 'late', name: '1bjorn' }, at: h.clock.now() });
    await h.settle();
    expect(h.started()).toEqual(['a', 'late']);
    expect(slot?.getSnapshot().context.queue.length).toBe(0);
    expect(h.errors).toEqual([]);
  });

  it('the numbered slot binding keeps one session across its missions', async () => {
    const h = startHall();
    h.boot();
    h.spawn('1bjorn', 'a');
    h.spawn('1bjorn', 'b');
    await h.settle();
    await h.complete('a');
    await h.complete('b');
    const sessions = h.world.prepared.map((p) => p.session);
    // The first run creates the session, the second continues it.
    expect(sessions[0]).toBeUndefined();
    expect(sessions[1]).toBe(`sess-${h.runIdOf('a')}`);
    expect(h.bus('session.bound')).toEqual([{ type: 'session.bound', binding: 'slot:1bjorn', session: `sess-${h.runIdOf('a')}` }]);
  });

  it('missions a previous hall left waiting start first, before any new one', async () => {
    const waiting = [
      { id: 'old1', name: '1bjorn', mission: 'old-1' },
      { id: 'old2', name: '1bjorn', mission: 'old-2' },
    ];
    const h = startHall({ slotQueues: { '1bjorn': waiting } });
    h.boot();
    h.spawn('1bjorn', 'new');
    await h.settle();
    expect(h.started()).toEqual(['old-1']);
    await h.complete('old-1');
    await h.complete('old-2');
    await h.complete('new');
    expect(h.started()).toEqual(['old-1', 'old-2', 'new']);
    expect(h.allBus()[0]).toEqual({ type: 'hall.started', root: '/hall' });
    // The slots hold them; the hall keeps no copy that would keep them alive after they ran.
    expect(h.hall.getSnapshot().context.slotQueues).toEqual({});
  });

  it("run ids are SLOT-TIME with .2, .3 in one second, and never repeat a previous hall's", async () => {
    const h = startHall({ runIdCursors: { bjorn: { sec: 0, n: 2 } } });
    h.boot();
    h.spawn('bjorn', 'a');
    h.spawn('bjorn', 'b');
    h.clock.advance(1500);
    h.spawn('bjorn', 'c');
    await h.settle();
    expect(['a', 'b', 'c'].map((m) => h.runIdOf(m))).toEqual(['bjorn-0.3', 'bjorn-0.4', 'bjorn-1']);
  });

  it('a refused raider entry starts nothing and answers with the refusal', async () => {
    const h = startHall();
    h.world.refuse.set('ivar', { reason: 'provider_not_stored', error: 'alias acme is not stored' });
    h.boot();
    const r = h.spawn('ivar', 'x');
    await h.settle();
    expect(h.reply(r)?.body).toEqual({ status: 'refused', reason: 'provider_not_stored', error: 'alias acme is not stored' });
    expect(h.bus('raider.refused')).toEqual([
      expect.objectContaining({ status: 'refused', slot: 'ivar', name: 'ivar', reason: 'provider_not_stored', queued: false }),
    ]);
    expect(h.world.processes.size).toBe(0);
  });

  it('a mission refused as it is pulled from the queue says queued: true, and the next one runs', async () => {
    const h = startHall();
    h.boot();
    h.spawn('1ivar', 'a');
    h.spawn('1ivar', 'b');
    h.spawn('1ivar', 'c');
    await h.settle();
    h.world.refuse.set('ivar', { reason: 'provider_not_stored', error: 'no' });
    await h.complete('a');
    // b and c are both refused as they are pulled; the slot is idle again.
    expect(h.bus('raider.refused').map((e) => [e.mission_id, e.queued])).toEqual([
      ['m2', true],
      ['m3', true],
    ]);
    expect(h.started()).toEqual(['a']);
    h.world.refuse.clear();
    h.spawn('1ivar', 'd');
    await h.settle();
    expect(h.started()).toEqual(['a', 'd']);
    expect(h.storeOps().filter((op) => op.op === 'remove')).toHaveLength(2);
  });

  it('unsafe names and bad payloads are refused by the gateway before the hall sees them', async () => {
    const h = startHall();
    h.boot();
    const gateway = new HallGateway(h.hall, { accepting: () => true, lastError: () => null, commit: () => Promise.resolve() });
    const bad = ['../x', '', 'a/b', 'x'.repeat(65), 'sp ace'];
    const replies = await Promise.all(
      bad.map((name) => gateway.request({ type: 'cmd.spawn', missionId: `m-${name}`, name, mission: 'm', at: 0 })),
    );
    for (const reply of replies) expect(reply).toMatchObject({ error: expect.stringMatching(/raider name/) });
    expect(await gateway.request({ type: 'cmd.spawn', missionId: 'm-b', name: 'bjorn', mission: 'm', binding: 'a b', at: 0 })).toEqual({
      error: expect.stringMatching(/^invalid binding "a b"/),
    });
    await h.settle();
    expect(h.world.prepared).toEqual([]);
    expect(h.emitted).toEqual(expect.not.arrayContaining([expect.objectContaining({ type: 'reply' })]));
  });

  it('the gateway adds a notice to a taken spawn; a queued reply keeps its keys in sorted order', async () => {
    const h = startHall();
    h.boot();
    const store = { accepting: () => true, lastError: () => null, commit: () => Promise.resolve() };
    const gateway = new HallGateway(h.hall, store, (name) => (name === '1ivar' ? 'no entry' : undefined));
    const spawn = (missionId: string, mission: string) => gateway.request({ type: 'cmd.spawn', missionId, name: '1ivar', mission, at: 0 });
    const started = spawn('m-a', 'a');
    await h.settle();
    expect(await started).toMatchObject({ slot: '1ivar', mission_id: 'm-a', notice: 'no entry' });
    const queued = await spawn('m-b', 'b');
    expect(queued).toEqual({ mission_id: 'm-b', notice: 'no entry', position: 1, queue_depth: 1, queued: 1, slot: '1ivar' });
    // Sorted keys: the control socket writes it with the native JSON writer (canonical-json.ts).
    expect(Object.keys(queued)).toEqual(['mission_id', 'notice', 'position', 'queue_depth', 'queued', 'slot']);
    const plain = new HallGateway(h.hall, store, () => undefined);
    expect(await plain.request({ type: 'cmd.spawn', missionId: 'm-c', name: '1ivar', mission: 'c', at: 0 })).toEqual({
      mission_id: 'm-c',
      position: 2,
      queue_depth: 2,
      queued: 1,
      slot: '1ivar',
    });
  });

  it('stopping: no waiting mission starts, raiders get SIGTERM, then SIGKILL after 5 s', async () => {
    const h = startHall();
    h.boot();
    h.spawn('1bjorn', 'a');
    h.spawn('1bjorn', 'b');
    h.spawn('bjorn', 'p');
    await h.settle();
    h.hall.send({ type: 'hall.stop' });
    expect(h.bus('hall.stopping')).toHaveLength(1);
    expect(h.proc('a')!.signals).toEqual(['SIGTERM']);
    expect(h.proc('p')!.signals).toEqual(['SIGTERM']);
    const late = h.spawn('bjorn', 'late');
    expect(h.reply(late)?.body).toEqual({ error: 'the hall is stopping; the mission was not accepted' });
    h.proc('a')!.exit({ signal: 'SIGTERM' }, { version: 1, status: 'interrupted', signal: 'TERM' });
    await h.settle();
    expect(h.started()).toEqual(['a', 'p']);
    h.clock.advance(5000);
    expect(h.proc('p')!.signals).toEqual(['SIGTERM', 'SIGKILL']);
    h.proc('p')!.exit({ signal: 'SIGKILL' });
    await h.settle();
    expect(h.hall.getSnapshot().status).toBe('done');
    expect(h.emitted.at(-1)).toEqual({ type: 'hall.stopped' });
    expect(h.bus('raider.done')).toHaveLength(2);
    // b stays in its queue for the next hall: no store op removed it.
    expect(h.storeOps().filter((op) => op.op === 'remove')).toEqual([]);
  });

  it('a hall without raiders stops at once', () => {
    const h = startHall();
    h.boot();
    h.hall.send({ type: 'hall.stop' });
    expect(h.hall.getSnapshot().status).toBe('done');
  });
});
