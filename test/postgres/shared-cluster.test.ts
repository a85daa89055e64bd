// Several halls, one cluster: real hall processes (bin/raider hall start) on
// separate roots against one embedded PostgreSQL, `cluster_mode: shared`.
// A mission submitted to any hall runs on one hall with room; a numbered slot
// and a binding run one mission at a time across the halls, in the order
// they were submitted; each hall keeps to its max_running. A hall whose lease
// expires is taken over: its runs end `failed` naming it, once, and what
// waited behind them runs elsewhere; a stalled hall that comes back stops
// what the cluster took from it, without a second report.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedAfterEachTest, type HallProcess } from '../support/cluster-hall-processes.js';
import { usePostgresServer } from '../support/postgres-server.js';
import { eventually, request, spawnHallProcess, tapEvents, tempRoot, type EventTap, type Json } from '../support/hall-client.js';

const server = usePostgresServer();
const LEASE_SECONDS = 2;

const { halls, taps } = closedAfterEachTest();

async function startHallOn(url: string, id: string, record: string, maxRunning = 2, root = tempRoot()): Promise<HallProcess> {
  fs.writeFileSync(
    path.join(root, '.raider-hall.yml'),
    `raiders: { bjorn: {}, ulf: {} }\nstorage: { postgres: "${url}" }\ncluster: team-a\ncluster_mode: shared\n` +
      `hall_id: ${id}\nlease_seconds: ${LEASE_SECONDS}\nmax_running: ${maxRunning}\n`,
  );
  const child = await spawnHallProcess(root, { FAKE_RAIDER_RECORD: record });
  const hall = { id, root, socket: path.join(root, '.raider-hall.socket'), child };
  halls.push(hall);
  return hall;
}

/** A database of its own, an empty record file for the raiders, and a file whose creation ends `until` missions. */
async function freshCluster(): Promise<{ url: string; record: string; release: string }> {
  const dir = tempRoot();
  const record = path.join(dir, 'record.txt');
  fs.writeFileSync(record, '');
  return { url: await server.freshDatabase(), record, release: path.join(dir, 'release') };
}

async function tap(h: HallProcess, filter = 'raider.'): Promise<EventTap> {
  const t = await tapEvents(h.socket, filter);
  taps.push(t);
  return t;
}

interface Span {
  label: string;
  root: string;
  start: number;
  end: number;
}

/** The record's lines as spans, by line number (the order the raiders wrote them in). */
function spans(record: string): Span[] {
  const lines = fs.readFileSync(record, 'utf8').split('\n').filter(Boolean);
  const open = new Map<string, Span>();
  const all: Span[] = [];
  lines.forEach((line, i) => {
    const [kind, label = '', root = ''] = line.split(' ');
    if (kind === 'start') {
      const span = { label, root, start: i, end: Number.POSITIVE_INFINITY };
      open.set(label, span);
      all.push(span);
    } else {
      const span = open.get(label);
      if (span) span.end = i;
    }
  });
  return all;
}

function overlaps(list: Span[]): boolean {
  return list.some((a, i) => list.some((b, j) => i < j && a.start < b.end && b.start < a.end));
}

describe('several halls on one shared cluster', () => {
  it('runs missions submitted to any hall on halls with room, one at a time per numbered slot and binding, in FIFO order', async () => {
    const url = await server.freshDatabase();
    const record = path.join(tempRoot(), 'record.txt');
    fs.writeFileSync(record, '');
    const three = await Promise.all(['h1', 'h2', 'h3'].map((id) => startHallOn(url, id, record)));
    const [h1] = three;
    if (!h1) throw new Error('no hall');
    const h1Events = await tap(h1);

    const submitted: Array<{ label: string; reply: Json }> = [];
    const submit = async (i: number, payload: Json, label: string) => {
      const hall = three[i % three.length];
      if (!hall) throw new Error('no hall');
      const reply = await request(hall.socket, { cmd: 'spawn', ...payload });
      submitted.push({ label, reply });
    };
    for (let i = 0; i < 6; i++) {
      await submit(i, { name: '1bjorn', mission: `span s${i} 120` }, `s${i}`);
      await submit(i + 1, { name: 'ulf', binding: 'telegram:ops:7', mission: `span b${i} 80` }, `b${i}`);
      await submit(i + 2, { name: 'bjorn', mission: `span p${i} 400` }, `p${i}`);
    }
    for (const { reply } of submitted) expect(reply).toMatchObject({ queued: 1, mission_id: expect.any(String) });

    await eventually(() => expect(spans(record).filter((s) => Number.isFinite(s.end))).toHaveLength(18), 30_000, 50);
    const all = spans(record);
    const serial = all.filter((s) => s.label.startsWith('s'));
    const bound = all.filter((s) => s.label.startsWith('b'));
    // One at a time across the halls, in the order submitted.
    expect(serial.map((s) => s.label)).toEqual(['s0', 's1', 's2', 's3', 's4', 's5']);
    expect(bound.map((s) => s.label)).toEqual(['b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
    expect(overlaps(serial)).toBe(false);
    expect(overlaps(bound)).toBe(false);
    // The work spread over the halls, and no hall ran more than its max_running at once.
    const roots = new Set(all.map((s) => s.root));
    expect(roots.size).toBeGreaterThanOrEqual(2);
    for (const root of roots) expect(three.map((h) => h.root)).toContain(root);
    for (const root of roots) {
      const mine = all.filter((s) => s.root === root);
      const most = Math.max(...mine.map((a) => mine.filter((b) => b.start <= a.start && a.start < b.end).length));
      expect(most).toBeLessThanOrEqual(2);
    }
    // The subscribers of one hall see the cluster's events, each naming its hall.
    const ids = submitted.map((x) => x.reply.mission_id);
    await eventually(
      () => expect(new Set(h1Events.all.filter((e) => e.type === 'raider.done').map((e) => e.mission_id))).toEqual(new Set(ids)),
      10_000,
    );
    const dones = h1Events.all.filter((e) => e.type === 'raider.done');
    expect(dones).toHaveLength(18);
    expect(new Set(dones.map((e) => e.hall)).size).toBe(roots.size);
    for (const e of dones) expect(['h1', 'h2', 'h3']).toContain(e.hall);
    expect(h1Events.all.filter((e) => e.type === 'raider.queued').every((e) => typeof e.hall === 'string')).toBe(true);
  });

  it('takes over a hall killed with kill -9 within lease + 1 s: its run ends failed naming it, once; what waited runs on another hall', async () => {
    const { url, record, release } = await freshCluster();
    const a = await startHallOn(url, 'hall-a', record);
    const holder = await request(a.socket, { cmd: 'spawn', name: '1bjorn', mission: `until ${release}` });
    expect(holder).toMatchObject({ queued: 1 });
    const [left] = await eventually(async () => {
      const { raiders } = await request(a.socket, { cmd: 'ps' });
      expect(raiders).toHaveLength(1);
      return raiders as Json[];
    });
    const b = await startHallOn(url, 'hall-b', record);
    const events = await tap(b);
    for (const label of ['w1', 'w2']) await request(b.socket, { cmd: 'spawn', name: '1bjorn', mission: `span ${label} 50` });

    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    const done = await events.waitFor((e) => e.type === 'raider.done' && e.mission_id === holder.mission_id, 10_000);
    expect(Date.now() - killedAt).toBeLessThanOrEqual((LEASE_SECONDS + 1) * 1000 + 500);
    expect(done).toMatchObject({ status: 'failed', slot: '1bjorn', hall: 'hall-a', reported_by: 'hall-b' });
    expect(done.error).toContain('hall-a');
    await eventually(
      () =>
        expect(
          spans(record)
            .filter((s) => Number.isFinite(s.end))
            .map((s) => s.label),
        ).toEqual(['w1', 'w2']),
      10_000,
    );
    expect(spans(record).every((s) => s.root === b.root)).toBe(true);
    expect(events.all.filter((e) => e.type === 'raider.done' && e.mission_id === holder.mission_id)).toHaveLength(1);
    // Its raider outlived it; hall a, started again on its root, stops it: the cluster reported that run failed.
    const pid = Number(left?.pid);
    expect(() => process.kill(pid, 0)).not.toThrow();
    await startHallOn(url, 'hall-a', record, 2, a.root);
    await eventually(() => expect(() => process.kill(pid, 0)).toThrow(), 10_000);
    expect(fs.existsSync(release)).toBe(false);
    fs.writeFileSync(release, '');
  });

  it('a hall killed with kill -9 and started again before any takeover adopts its raider and lets it finish', async () => {
    const { url, record, release } = await freshCluster();
    // Alone in its cluster: no other hall takes its runs over, however long its restart takes.
    const a = await startHallOn(url, 'hall-a', record);
    const holder = await request(a.socket, { cmd: 'spawn', name: 'bjorn', mission: `until ${release}` });
    const [left] = await eventually(async () => {
      const { raiders } = await request(a.socket, { cmd: 'ps' });
      expect(raiders).toHaveLength(1);
      return raiders as Json[];
    });
    a.child.kill('SIGKILL');
    const back = await startHallOn(url, 'hall-a', record, 2, a.root);
    const events = await tap(back);
    // Its run is still in its ledger: adopted, not taken for a left-over raider.
    expect((await request(back.socket, { cmd: 'ps' })).raiders).toMatchObject([{ id: left?.id, pid: left?.pid }]);
    expect(() => process.kill(Number(left?.pid), 0)).not.toThrow();
    fs.writeFileSync(release, '');
    const done = await events.waitFor((e) => e.type === 'raider.done' && e.mission_id === holder.mission_id, 10_000);
    expect(done).toMatchObject({ id: left?.id, status: 'completed' });
  });

  it('a stalled hall that comes back learns it was replaced and stops the run the cluster reported, without a second raider.done', async () => {
    const { url, record, release } = await freshCluster();
    const a = await startHallOn(url, 'hall-a', record);
    const aEvents = await tap(a);
    const holder = await request(a.socket, { cmd: 'spawn', name: 'bjorn', mission: `until ${release}` });
    const spawned = await aEvents.waitFor((e) => e.type === 'raider.spawned' && e.mission_id === holder.mission_id);
    const b = await startHallOn(url, 'hall-b', record);
    const bEvents = await tap(b);

    a.child.kill('SIGSTOP');
    const done = await bEvents.waitFor((e) => e.type === 'raider.done' && e.mission_id === holder.mission_id, 10_000);
    expect(done).toMatchObject({ status: 'failed' });
    expect(done.error).toContain('hall-a');
    a.child.kill('SIGCONT');
    // Back, it stops the raider the cluster took from it, and says nothing more of it.
    await eventually(async () => expect((await request(a.socket, { cmd: 'ps' })).raiders).toEqual([]), 10_000);
    await eventually(() => expect(() => process.kill(spawned.pid, 0)).toThrow(), 5_000);
    // Its subscribers hear of the run once: the cluster's report, relayed; hall a adds none of its own.
    await eventually(() => expect(aEvents.all.filter((e) => e.type === 'raider.done')).toHaveLength(1), 5_000);
    expect(aEvents.all.find((e) => e.type === 'raider.done')).toMatchObject({ id: done.id, status: 'failed', hall: 'hall-a' });
    // And it serves the cluster again.
    const after = await request(a.socket, { cmd: 'spawn', name: '1bjorn', mission: 'span again 10' });
    expect(after).toMatchObject({ queued: 1 });
    await eventually(() => expect(spans(record).map((s) => s.label)).toEqual(['again']), 10_000);
    // Nor does it write the report it relayed back to the cluster as its own (it names hall a): hall a shares its
    // events in order, so once hall b has the end of `again` from it, a copy written before would be there too.
    await bEvents.waitFor((e) => e.type === 'raider.done' && e.mission_id === after.mission_id, 10_000);
    expect(bEvents.all.filter((e) => e.type === 'raider.done' && e.id === done.id)).toHaveLength(1);
    // Hall a's own subscribers too heard of it once, in all that time (the check above stops at the first).
    expect(aEvents.all.filter((e) => e.type === 'raider.done' && e.mission_id === holder.mission_id)).toHaveLength(1);
  });

  it('ps on any hall lists the runs of every hall; cancel from any hall reaches a run on another, or drops a waiting mission', async () => {
    const { url, record, release } = await freshCluster();
    const [a, b] = await Promise.all([startHallOn(url, 'hall-a', record, 1), startHallOn(url, 'hall-b', record, 1)]);
    if (!a || !b) throw new Error('no halls');
    const aEvents = await tap(a);
    for (let i = 0; i < 2; i++) await request(a.socket, { cmd: 'spawn', name: 'bjorn', mission: `until ${release}` });
    const waiting = await request(b.socket, { cmd: 'spawn', name: 'bjorn', mission: 'answer never' });
    const running = await eventually(async () => {
      const ps = await request(b.socket, { cmd: 'ps' });
      expect(ps.raiders.map((r: Json) => r.hall).sort()).toEqual(['hall-a', 'hall-b']);
      return ps.raiders as Json[];
    }, 15_000);
    // Each hall hears of the other's runs through the database, in its own time: hall a may learn of b's run later.
    await eventually(async () => expect((await request(a.socket, { cmd: 'ps' })).raiders).toEqual(running), 15_000);

    expect(await request(b.socket, { cmd: 'cancel', id: waiting.mission_id })).toEqual({
      dropped: 1,
      mission_id: waiting.mission_id,
      slot: 'bjorn',
    });
    const onB = running.find((r) => r.hall === 'hall-b');
    if (!onB) throw new Error('no run on hall-b');
    expect(await request(a.socket, { cmd: 'cancel', id: onB.id })).toEqual({ cancelled: 1, id: onB.id });
    const done = await aEvents.waitFor((e) => e.type === 'raider.done' && e.id === onB.id, 10_000);
    // The cancel reached the raider on hall b (its status depends on what the fake raider wrote before dying).
    expect(done).toMatchObject({ hall: 'hall-b', cancel_requested: true });
    expect(await request(a.socket, { cmd: 'kill', id: 'bjorn-nothing' })).toEqual({ error: 'raider not found', code: 'run_not_found' });
    fs.writeFileSync(release, '');
  });
});
