// The shared cluster's queue on a real PostgreSQL, without halls: concurrent
// claimers never hold two missions of one numbered slot or binding, and take
// each queue's missions in FIFO order; a lost hall's claimed missions go
// back to the heads of their queues, and its runs are handed to one rescuer only;
// a cron occurrence is claimed by one hall, and a bot's poller role passes
// from a hall only once its lease has expired.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { DatabaseSettings } from '../../src/adapters/storage/postgres/database-settings.js';
import { PostgresStateStore } from '../../src/adapters/storage/postgres/postgres-state-store.js';
import type { LostRun, SharedQueue } from '../../src/ports/cluster-queue.js';
import type { Mission } from '../../src/domain/mission.js';
import { queryDatabase as query, usePostgresServer } from '../support/postgres-server.js';
import { tempRoot } from '../support/temp-roots.js';
import { raiderDone } from '../support/bus-events.js';

const server = usePostgresServer();
const open: PostgresStateStore[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close().catch(() => undefined);
});

async function openShared(url: string, hallId: string, leaseMs = 60_000): Promise<{ store: PostgresStateStore; queue: SharedQueue }> {
  const settings: DatabaseSettings = { url, where: 'the test database', cluster: 'c', hallId, shared: true, leaseMs };
  const store = await PostgresStateStore.open(settings, { root: `/${hallId}`, warn: () => undefined });
  open.push(store);
  if (!store.shared) throw new Error('not shared');
  return { store, queue: store.shared };
}

const m = (id: string, name: string, binding?: string): Mission => ({ id, name, mission: id, ...(binding ? { binding } : {}) });

/**
 * Submits and claims mission b0 of ulf for the binding, and writes the header of the session its run
 * created into the hall's root, as a run does before its raider starts: the run record to apply.
 */
async function claimRunThatMadeSession(root: string, queue: SharedQueue, binding: string, session: string) {
  const entry = m('b0', 'ulf', binding);
  await queue.submit(entry);
  const [claimed] = await queue.claim(1);
  if (!claimed) throw new Error('nothing claimed');
  fs.mkdirSync(path.join(root, '.raider', 'sessions'), { recursive: true });
  fs.writeFileSync(path.join(root, '.raider', 'sessions', `${session}.jsonl`), '{"header":1}\n');
  const run = {
    id: claimed.runId,
    slot: 'ulf',
    base_name: 'ulf',
    entry,
    binding,
    session,
    started_at: 1,
    events_path: '/e',
    log_path: '/l',
  };
  return { claimed, run };
}

describe('the shared queue', () => {
  it('lets concurrent claimers hold only the head of each numbered slot and binding, in order', async () => {
    const url = await server.freshDatabase();
    const halls = await Promise.all(['h1', 'h2', 'h3'].map((id) => openShared(url, id)));
    const [first] = halls;
    if (!first) throw new Error('no hall');
    const submitted: Mission[] = [];
    for (let i = 0; i < 5; i++) submitted.push(m(`s${i}`, '1bjorn'), m(`b${i}`, 'ulf', 'telegram:x:1'), m(`p${i}`, 'bjorn'));
    for (const entry of submitted) await first.queue.submit(entry);

    const order: string[] = [];
    for (let round = 0; round < 5; round++) {
      // Three halls claim at once; each claimed mission then "runs" and ends (its row leaves).
      const claims = (await Promise.all(halls.map((h) => h.queue.claim(10)))).flat().map((c) => c.entry.id);
      const serial = claims.filter((id) => id.startsWith('s'));
      const bound = claims.filter((id) => id.startsWith('b'));
      expect(serial).toEqual([`s${round}`]);
      expect(bound).toEqual([`b${round}`]);
      order.push(...serial, ...bound);
      await query(url, 'DELETE FROM raider_hall_missions WHERE id = ANY($1)', [claims]);
    }
    expect(order).toEqual(['s0', 'b0', 's1', 'b1', 's2', 'b2', 's3', 'b3', 's4', 'b4']);
    const rows = await query(url, 'SELECT count(*)::int AS n FROM raider_hall_missions');
    expect(rows.rows).toEqual([{ n: 0 }]);
  });

  it('claims a mission moved to the front first, but not while the claimed head of its numbered slot starts', async () => {
    const url = await server.freshDatabase();
    const a = await openShared(url, 'a');
    const b = await openShared(url, 'b');
    for (const entry of [
      m('s0', '1bjorn'),
      m('s1', '1bjorn'),
      m('s2', '1bjorn'),
      m('b0', 'ulf', 'telegram:x:1'),
      m('b1', 'ulf', 'telegram:x:1'),
    ])
      await a.queue.submit(entry);
    expect((await a.queue.claim(10)).map((x) => x.entry.id)).toEqual(['s0', 'b0']);
    // s2 goes below s0, which is claimed and not yet recorded as a run: s0 still holds 1bjorn.
    expect(await b.queue.front('s2')).toEqual({ entry: m('s2', '1bjorn'), from: 3 });
    expect(await b.queue.front('b1')).toEqual({ entry: m('b1', 'ulf', 'telegram:x:1'), binding: 'telegram:x:1', from: 2 });
    expect(await b.queue.claim(10)).toEqual([]);
    await query(url, "DELETE FROM raider_hall_missions WHERE id IN ('s0', 'b0')");
    expect((await b.queue.claim(10)).map((x) => x.entry.id)).toEqual(['s2', 'b1']);
    // Claimed: no longer waiting, so not moved.
    expect(await a.queue.front('s2')).toBeNull();
    await query(url, "DELETE FROM raider_hall_missions WHERE id IN ('s2', 'b1')");
    expect(await a.queue.front('s1')).toEqual({ entry: m('s1', '1bjorn'), from: 1 });
    expect((await a.queue.claim(10)).map((x) => x.entry.id)).toEqual(['s1']);
  });

  it("gives a lost hall's claimed missions back to the heads of their queues, and its runs to one rescuer", async () => {
    const url = await server.freshDatabase();
    const a = await openShared(url, 'lost', 60_000);
    const b = await openShared(url, 'b');
    const c = await openShared(url, 'c');
    for (const entry of [m('s0', '1bjorn'), m('s1', '1bjorn'), m('p0', 'bjorn')]) await a.queue.submit(entry);
    expect((await a.queue.claim(10)).map((x) => x.entry.id)).toEqual(['s0', 'p0']);
    // A run of the lost hall, recorded as any start is.
    a.store.apply({
      op: 'run',
      run: { id: 'bjorn-1', slot: 'bjorn', base_name: 'bjorn', entry: m('p0', 'bjorn'), started_at: 1, events_path: '/e', log_path: '/l' },
    });
    await a.store.commit();
    expect(await b.queue.claim(10)).toEqual([]);
    await query(url, "UPDATE raider_hall_halls SET lease_until = now() - interval '1 second' WHERE id = 'lost'");

    const report = (lost: LostRun) => raiderDone(lost.run.id, { status: 'failed' });
    const [fromB, fromC] = await Promise.all([b.queue.rescue(report), c.queue.rescue(report)]);
    const reported = [...fromB, ...fromC];
    expect(reported.map((r) => [r.hall, r.run.id])).toEqual([['lost', 'bjorn-1']]);
    // The report is in the cluster's events, written in the takeover's transaction, once.
    const events = await query(url, "SELECT event FROM raider_hall_events WHERE event->>'type' = 'raider.done'");
    expect(events.rows).toEqual([{ event: { ...raiderDone('bjorn-1', { status: 'failed' }), hall: 'lost' } }]);
    expect((await query(url, "SELECT id FROM raider_hall_halls WHERE id = 'lost'")).rows).toEqual([]);
    // s0 is the head of 1bjorn again, before s1.
    expect((await c.queue.claim(10)).map((x) => x.entry.id)).toEqual(['s0']);
    // The lost hall no longer holds its run.
    expect(await a.queue.stillHeld(['bjorn-1'])).toEqual(new Set());
  });

  it("answers the cron and Telegram faces: the first claim of an occurrence wins; a bot's role passes only when its holder's lease expired", async () => {
    const url = await server.freshDatabase();
    const [a, b] = await Promise.all([openShared(url, 'h1'), openShared(url, 'h2')]);
    if (!a || !b) throw new Error('no halls');
    const slot = Date.parse('2026-12-02T08:00:00Z');
    // One occurrence, asked by both halls at once: one wins, and asking again answers the same.
    const [winsA, winsB] = await Promise.all([a.queue.faces.claimCronSlot('tick', slot), b.queue.faces.claimCronSlot('tick', slot)]);
    expect([winsA, winsB].sort()).toEqual([false, true]);
    const winner = winsA ? a : b;
    expect(await winner.queue.faces.claimCronSlot('tick', slot)).toBe(true);
    expect(await (winsA ? b : a).queue.faces.claimCronSlot('tick', slot)).toBe(false);
    expect(await a.queue.faces.lastCronSlot('tick')).toBe(slot);
    expect(await a.queue.faces.lastCronSlot('other')).toBeNull();

    expect(await a.queue.faces.holdRole('telegram:ops')).toBe(true);
    expect(await b.queue.faces.holdRole('telegram:ops')).toBe(false);
    expect(await a.queue.faces.holdRole('telegram:ops')).toBe(true);
    expect(await a.queue.faces.writeFactHolding('telegram:ops', 'telegram', 'ops', { offset: 5 })).toBe(true);
    expect(await b.queue.faces.writeFactHolding('telegram:ops', 'telegram', 'ops', { offset: 9 })).toBe(false);
    expect(await b.queue.faces.readFact('telegram', 'ops')).toEqual({ offset: 5 });

    // h1's lease runs out (as if it stalled): h2 takes the role; h1 holds nothing, and writes nothing, from then on.
    await query(url, "UPDATE raider_hall_halls SET lease_until = now() - interval '1 second' WHERE id = 'h1'");
    expect(await a.queue.faces.holdRole('telegram:ops')).toBe(false);
    expect(await b.queue.faces.holdRole('telegram:ops')).toBe(true);
    expect(await a.queue.faces.writeFactHolding('telegram:ops', 'telegram', 'ops', { offset: 6 })).toBe(false);
    expect(await b.queue.faces.writeFactHolding('telegram:ops', 'telegram', 'ops', { offset: 7 })).toBe(true);
    expect(await a.queue.faces.readFact('telegram', 'ops')).toEqual({ offset: 7 });
    // Back with a live lease, h1 does not take the role from a live holder.
    await query(url, "UPDATE raider_hall_halls SET lease_until = now() + interval '1 minute' WHERE id = 'h1'");
    expect(await a.queue.faces.holdRole('telegram:ops')).toBe(false);

    await a.queue.submit(m('c1', 'bjorn', 'cron:tick'));
    expect(await b.queue.faces.bindingBusy('cron:tick')).toBe(true);
    expect(await b.queue.faces.bindingBusy('cron:other')).toBe(false);
    // By prefix, as it is written (a `_` or `%` in it is no pattern).
    expect(await b.queue.faces.busyBindings('cron:')).toEqual(['cron:tick']);
    expect(await b.queue.faces.busyBindings('cron_')).toEqual([]);
    expect(await b.queue.faces.missionKnown('c1')).toBe(true);
    expect(await b.queue.faces.missionKnown('c2')).toBe(false);
  });

  it('never starts a mission twice: a hall whose claim went back to the cluster and to another hall has its run refused', async () => {
    const url = await server.freshDatabase();
    const a = await openShared(url, 'stalled');
    const b = await openShared(url, 'b');
    const entry = m('s0', '1bjorn');
    await b.queue.submit(entry);
    const [fromA] = await a.queue.claim(1);
    if (!fromA) throw new Error('a claimed nothing');
    // The claimer stalls past its lease before it records the run: b takes it over, the claim waits again, b claims it.
    await query(url, "UPDATE raider_hall_halls SET lease_until = now() - interval '1 second' WHERE id = 'stalled'");
    await b.queue.rescue((lost) => raiderDone(lost.run.id));
    const [fromB] = await b.queue.claim(1);
    expect(fromB?.entry.id).toBe('s0');
    if (!fromB) throw new Error('b claimed nothing');
    const refusedHere: string[][] = [];
    a.queue.onRunsRefused((ids) => refusedHere.push([...ids]));
    const run = (id: string) => ({ id, slot: '1bjorn', base_name: 'bjorn', entry, started_at: 1, events_path: '/e', log_path: '/l' });

    // The stalled hall comes back and records its run: refused, and said so before its commit resolves.
    a.store.apply({ op: 'run', run: run(fromA.runId) });
    await a.store.commit();
    expect(refusedHere).toEqual([[fromA.runId]]);
    expect(a.store.refusal(fromA.runId)).toMatch(/gave its mission to another hall/);
    // Its run ends unstarted: its end and its mission's removal leave b's claim alone.
    a.store.apply({ op: 'end', runId: fromA.runId });
    a.store.apply({ op: 'remove', missionId: 's0' });
    a.store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry });
    await a.store.commit();
    expect((await query(url, "SELECT state, hall FROM raider_hall_missions WHERE id = 's0'")).rows).toEqual([
      { state: 'claimed', hall: 'b' },
    ]);

    // b records its run: the mission row goes, its run row comes; sent twice (an unanswered COMMIT), still one run.
    b.store.apply({ op: 'run', run: run(fromB.runId) });
    b.store.apply({ op: 'run', run: run(fromB.runId) });
    await b.store.commit();
    expect(b.store.refusal(fromB.runId)).toBeNull();
    expect((await query(url, 'SELECT id, hall FROM raider_hall_runs')).rows).toEqual([{ id: fromB.runId, hall: 'b' }]);
    expect((await query(url, 'SELECT count(*)::int AS n FROM raider_hall_missions')).rows).toEqual([{ n: 0 }]);
    // Nothing the stalled hall still sends puts the mission back.
    a.store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry });
    a.store.apply({ op: 'run', run: run(fromA.runId) });
    await a.store.commit();
    expect((await query(url, 'SELECT count(*)::int AS n FROM raider_hall_missions')).rows).toEqual([{ n: 0 }]);
    expect((await query(url, 'SELECT id, hall FROM raider_hall_runs')).rows).toEqual([{ id: fromB.runId, hall: 'b' }]);
  });
  it('commits a burst of submissions together, each in its place and committed before it resolves', async () => {
    const url = await server.freshDatabase();
    const { queue } = await openShared(url, 'h');
    // 500 at once was 294 refused ("timeout exceeded when trying to connect") with one transaction each.
    const burst = Array.from({ length: 500 }, (_, i) => m(`s${i}`, '1bjorn'));
    // One connection of its own; a pool queues the observer's queries (a pg client must not be asked twice at once).
    const observer = new pg.Pool({ connectionString: url, max: 1 });
    let replies: Array<{ depth: number; committed: boolean }>;
    try {
      replies = await Promise.all(
        burst.map(async (entry) => {
          const { depth } = await queue.submit(entry);
          // Resolved: its row is committed, seen from another connection.
          const row = await observer.query('SELECT 1 FROM raider_hall_missions WHERE id = $1', [entry.id]);
          return { depth, committed: row.rowCount === 1 };
        }),
      );
    } finally {
      await observer.end();
    }
    expect(replies).toEqual(burst.map((_, i) => ({ depth: i + 1, committed: true })));
    const order = await query(url, "SELECT id FROM raider_hall_missions WHERE cluster = 'c' ORDER BY seq");
    expect(order.rows.map((r: { id: string }) => r.id)).toEqual(burst.map((e) => e.id));
    // A mission submitted again (same id) keeps its row and place.
    expect(await queue.submit(m('s0', '1bjorn'))).toEqual({ depth: 1 });
  });
  it('answers each submission with its place: itself and the missions up to its seq of its numbered slot or binding, one by one, in a batch and after a move', async () => {
    const url = await server.freshDatabase();
    const { queue } = await openShared(url, 'h');
    // The place as the definition says, counted over the whole table for one mission.
    const place = async (id: string): Promise<number> => {
      const counted = await query(
        url,
        `SELECT (SELECT count(*) FROM raider_hall_missions e WHERE e.cluster = me.cluster AND e.seq <= me.seq
           AND (e.id = me.id OR e.serial_slot = me.serial_slot OR e.binding = me.binding))::integer AS depth
         FROM raider_hall_missions me WHERE me.cluster = 'c' AND me.id = $1`,
        [id],
      );
      return counted.rows[0]?.depth;
    };
    // A numbered slot alone, with a binding that a plain slot's mission shares, a plain slot, another numbered slot.
    const round = (i: number) => [
      m(`s${i}`, '1bjorn'),
      m(`sb${i}`, '1bjorn', 'telegram:x:1'),
      m(`b${i}`, 'ulf', 'telegram:x:1'),
      m(`p${i}`, 'bjorn'),
      m(`o${i}`, '2bjorn'),
    ];
    const depths = new Map<string, number>();
    const expectPlaces = async () => {
      for (const [id, depth] of depths) expect({ id, depth }).toEqual({ id, depth: await place(id) });
      depths.clear();
    };
    for (const entry of round(0)) depths.set(entry.id, (await queue.submit(entry)).depth);
    expect([...depths.values()]).toEqual([1, 2, 2, 1, 1]);
    await Promise.all([...round(1), ...round(2)].map(async (entry) => depths.set(entry.id, (await queue.submit(entry)).depth)));
    expect(depths.get('sb2')).toBe(8);
    await expectPlaces();
    // b2 before every mission of its binding: the next ones count it where it now is.
    await queue.front('b2');
    await Promise.all(round(3).map(async (entry) => depths.set(entry.id, (await queue.submit(entry)).depth)));
    await expectPlaces();
  });
  it('shares a session its run created as soon as it is bound: a hall lost before the run ends leaves the session to the next hall', async () => {
    const url = await server.freshDatabase();
    const root = tempRoot();
    const settings: DatabaseSettings = { url, where: 'the test database', cluster: 'c', hallId: 'h', shared: true, leaseMs: 60_000 };
    const store = await PostgresStateStore.open(settings, { root, warn: () => undefined });
    open.push(store);
    const queue = store.shared;
    if (!queue) throw new Error('not shared');
    const session = '20261202-085725-b129';
    const { run } = await claimRunThatMadeSession(root, queue, 'telegram:x:1', session);
    store.apply({ op: 'run', run });
    await store.commit();
    store.apply({ op: 'bind', binding: 'telegram:x:1', session });
    await store.commit();
    // No end yet (the hall may die now): the cluster has the binding's session and its journal.
    const pieces = await query(url, 'SELECT start, convert_from(data, $2) AS data FROM raider_hall_journal_chunks WHERE session = $1', [
      session,
      'UTF8',
    ]);
    expect(pieces.rows).toEqual([{ start: '0', data: '{"header":1}\n' }]);
    expect((await query(url, 'SELECT session FROM raider_hall_sessions')).rows).toEqual([{ session }]);
  });

  it('keeps a session its run created for the binding when the hall is lost after the raider started and before the binding was recorded', async () => {
    const url = await server.freshDatabase();
    const root = tempRoot();
    const settings: DatabaseSettings = { url, where: 'the test database', cluster: 'c', hallId: 'h', shared: true, leaseMs: 60_000 };
    const store = await PostgresStateStore.open(settings, { root, warn: () => undefined });
    open.push(store);
    const other = await openShared(url, 'other');
    const queue = store.shared;
    if (!queue) throw new Error('not shared');
    const binding = 'telegram:x:1';
    const session = '20261202-085725-c0de';
    const { claimed, run } = await claimRunThatMadeSession(root, queue, binding, session);
    store.apply({ op: 'run', run });
    await store.commit();
    // The raider may start now: the session's journal is in the cluster, its binding is not recorded yet.
    const pieces = await query(url, 'SELECT start, convert_from(data, $2) AS data FROM raider_hall_journal_chunks WHERE session = $1', [
      session,
      'UTF8',
    ]);
    expect(pieces.rows).toEqual([{ start: '0', data: '{"header":1}\n' }]);
    expect((await query(url, 'SELECT session FROM raider_hall_sessions')).rows).toEqual([]);
    // The hall is lost now: the takeover leaves the session to the binding, and its next mission, elsewhere, continues it.
    await query(url, "UPDATE raider_hall_halls SET lease_until = now() - interval '1 second' WHERE id = 'h'");
    const lost = await other.queue.rescue((l) => raiderDone(l.run.id, { status: 'failed' }));
    expect(lost.map((l) => l.run.id)).toEqual([claimed.runId]);
    expect((await query(url, 'SELECT binding, session FROM raider_hall_sessions')).rows).toEqual([{ binding, session }]);
    await other.queue.submit(m('b1', 'ulf', binding));
    expect(await other.queue.claim(1)).toEqual([expect.objectContaining({ entry: m('b1', 'ulf', binding), session })]);
  });

  it('keeps one raider.done per run in the cluster: a later end of the same run, shared or reported, is not written', async () => {
    const url = await server.freshDatabase();
    const a = await openShared(url, 'a');
    const b = await openShared(url, 'b');
    await a.queue.shareEvents([raiderDone('bjorn-1', { status: 'failed', error: 'the hall b that ran it was lost' })]);
    // The stalled hall's own end of that run, and a report written back, come later: neither is written.
    await b.queue.shareEvents([
      { type: 'raider.spawned', id: 'bjorn-2', pid: 2, slot: 'bjorn', base_name: 'bjorn', mission_id: 'm-bjorn-2' },
      raiderDone('bjorn-1'),
      raiderDone('bjorn-2'),
    ]);
    await a.queue.shareEvents([raiderDone('bjorn-1', { status: 'failed', error: 'the hall b that ran it was lost' })]);
    const rows = await query(
      url,
      "SELECT hall, event->>'type' AS type, event->>'id' AS id, event->>'status' AS status FROM raider_hall_events ORDER BY raider_hall_events.id",
    );
    expect(rows.rows).toEqual([
      { hall: 'a', type: 'raider.done', id: 'bjorn-1', status: 'failed' },
      { hall: 'b', type: 'raider.spawned', id: 'bjorn-2', status: null },
      { hall: 'b', type: 'raider.done', id: 'bjorn-2', status: 'completed' },
    ]);
  });
});
