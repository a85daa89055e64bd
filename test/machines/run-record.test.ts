import { describe, expect, it } from 'vitest';
import type { LedgerRun } from '../../src/machines/hall-effects.js';
import { startHall } from './hall-harness.js';

describe("a run's record goes through the hall's store channel before its raider starts", () => {
  it('the hall emits the record, the run waits for it to be written, then the raider starts', async () => {
    const h = startHall();
    const stored: LedgerRun[] = [];
    h.hall.on('store', (e) => {
      if (e.op.op !== 'run') return;
      stored.push(e.op.run);
      h.world.timeline.push(`stored ${e.op.run.id}`);
    });
    h.boot();
    h.spawn('1bjorn', 'a');
    h.spawn('1bjorn', 'b');
    await h.settle();
    const a = h.runIdOf('a');
    expect(h.world.timeline).toEqual([`stored ${a}`, `written ${a}`, `spawned ${a}`]);
    expect(stored).toEqual([
      {
        id: a,
        slot: '1bjorn',
        base_name: 'bjorn',
        entry: { id: 'm1', name: '1bjorn', mission: 'a' },
        binding: 'slot:1bjorn',
        session: `sess-${a}`,
        started_at: h.clock.now(),
        events_path: `/logs/${a}.events.jsonl`,
        log_path: '/logs/1bjorn.log',
      },
    ]);
    // The waiting mission is recorded only when its turn comes.
    await h.complete('a');
    const b = h.runIdOf('b');
    expect(h.world.timeline.slice(3)).toEqual([`stored ${b}`, `written ${b}`, `spawned ${b}`]);
    expect(h.errors).toEqual([]);
  });

  it('a start takes the run one step from its preparation to its raider: the hall sends no go-ahead back', async () => {
    const h = startHall();
    const events: Array<{ to: unknown; type: string }> = [];
    h.hall.system.inspect((e) => {
      if (e.type === '@xstate.event') events.push({ to: e.actorRef, type: e.event.type });
    });
    h.boot();
    h.spawn('bjorn', 'a');
    await h.settle();
    const run = h.hall.system.get(`run:${h.runIdOf('a')}`);
    const received = events.filter((e) => e.to === run).map((e) => e.type);
    // Its start, its preparation's end (record reported, process actor started), its pid.
    expect(received.slice(0, 3)).toEqual(['xstate.init', expect.stringMatching(/^xstate\.done\.actor\./), 'proc.spawned']);
    expect(h.world.timeline).toEqual([`written ${h.runIdOf('a')}`, `spawned ${h.runIdOf('a')}`]);
    expect(h.storeOps().map((op) => op.op)).toEqual(['run', 'pid']);
  });

  it('a start of a plain or numbered slot costs the hall two steps before its pid: the spawn and the record', async () => {
    const h = startHall();
    const toHall: string[] = [];
    h.hall.system.inspect((e) => {
      if (e.type === '@xstate.event' && e.actorRef === h.hall) toHall.push(e.event.type);
    });
    h.boot();
    h.spawn('bjorn', 'a');
    h.spawn('1bjorn', 'b');
    await h.settle();
    // Each start: its spawn command, its record, its pid (the two runs' steps interleave).
    expect([...toHall].sort()).toEqual([
      'cmd.spawn',
      'cmd.spawn',
      'hall.boot',
      'run.prepared',
      'run.prepared',
      'run.spawned',
      'run.spawned',
    ]);
    // A run of an explicit binding is told to its binding's queue (slot.runCreated), which then holds the next one.
    h.spawn('bjorn', 'c', { binding: 'telegram:bot:1' });
    h.spawn('bjorn', 'd', { binding: 'telegram:bot:1' });
    await h.settle();
    expect(toHall).toContain('slot.runCreated');
    expect(h.started()).toEqual(['a', 'b', 'c']);
  });

  it('a hall told to stop while a run is being prepared waits for that run, and stops once it ends', async () => {
    const h = startHall();
    h.boot();
    h.spawn('bjorn', 'a');
    // The run exists, its preparation not yet done.
    h.hall.send({ type: 'hall.stop' });
    expect(h.hall.getSnapshot().value).toBe('stopping');
    await h.settle();
    expect(h.proc('a')?.signals).toEqual(['SIGTERM']);
    expect(h.hall.getSnapshot().value).toBe('stopping');
    h.proc('a')?.exit({ signal: 'SIGTERM' });
    await h.settle();
    expect(h.hall.getSnapshot().value).toBe('stopped');
  });

  it('a refused mission is never recorded as a run', async () => {
    const h = startHall();
    h.world.refuse.set('bjorn', { reason: 'provider_not_stored', error: 'no provider' });
    h.boot();
    h.spawn('bjorn', 'a');
    await h.settle();
    expect(h.storeOps().filter((op) => op.op === 'run')).toEqual([]);
    expect(h.world.timeline).toEqual([]);
  });

  it('a run whose preparation fails is never recorded, and its spawn is answered with why', async () => {
    const h = startHall();
    h.world.failPrepare.add('bjorn');
    h.boot();
    const req = h.spawn('bjorn', 'a');
    await h.settle();
    expect(h.reply(req)?.body).toEqual({ error: `command failed: raider ${h.runIdOf('a')} could not be started: disk full` });
    expect(h.storeOps().map((op) => op.op)).toEqual(['end', 'remove']);
    expect(h.bus('raider.done')).toMatchObject([{ status: 'failed', mission_id: 'm1' }]);
    expect(h.world.timeline).toEqual([]);
  });

  it('a cancel that comes while the run is being recorded is applied once the raider exists', async () => {
    const h = startHall();
    h.hall.on('store', (e) => {
      // The cancel arrives between the record and the raider's start.
      if (e.op.op === 'run') h.hall.send({ type: 'cmd.cancel', reqId: 'c1', id: e.op.run.id });
    });
    h.boot();
    h.spawn('bjorn', 'a');
    await h.settle();
    expect(h.reply('c1')?.body).toEqual({ cancelled: 1, id: h.runIdOf('a') });
    expect(h.proc('a')?.signals).toEqual(['SIGINT']);
  });
});
