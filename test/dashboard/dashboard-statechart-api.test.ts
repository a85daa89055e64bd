/**
 * What the statechart page reads, pinned: `GET /api/actors` (every live
 * actor), `GET /api/actors/stream?id=ID` (one actor's snapshot, states and
 * events, protocol/actor-watch.ts), the statecharts the build laid out, and
 * the weight of the dashboard's scripts and styles.
 */
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPageAssets } from '../../src/adapters/dashboard/page-assets.js';
import { BATCH_GAP_MS, FLOOD_BATCH, FLOOD_GAP_MS } from '../../src/adapters/dashboard/actor-stream.js';
import { ActorWatchBatch, ActorWatchMessage } from '../../src/protocol/actor-watch.js';
import { defaultAdapters } from '../../src/actors/default-adapters.js';
import { eventually, rawExchange, runStarted, startTestHall, type TestHall } from '../support/test-hall.js';
import { type Board, bearer, boardOf, httpRequest, openEventStream } from './dashboard-support.js';

const CONFIG = `cancel_grace: 0.3
raiders: { bjorn: {} }
cron:
  - { id: nightly, name: bjorn, cron: '0 3 * * *', mission: 'answer nightly' }
dashboard: { listen: "127.0.0.1:0" }
`;

/**
 * The body of a `GET route` as the hall wrote it: each chunk of its chunked
 * encoding (one per write of the hall's), read from a plain TCP socket.
 */
function openChunks(board: Board, route: string): { head: { text: string }; chunks: string[]; at: number[]; close(): void } {
  const head = { text: '' };
  const chunks: string[] = [];
  /** When each chunk came (performance.now()). */
  const at: number[] = [];
  const socket = net.connect(board.port, '127.0.0.1');
  let buffer = Buffer.alloc(0);
  let body = false;
  socket.on('data', (data: Buffer) => {
    buffer = Buffer.concat([buffer, data]);
    if (!body) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      head.text = buffer.subarray(0, end).toString();
      buffer = buffer.subarray(end + 4);
      body = true;
    }
    for (let line = buffer.indexOf('\r\n'); line >= 0; line = buffer.indexOf('\r\n')) {
      const size = Number.parseInt(buffer.subarray(0, line).toString(), 16);
      if (buffer.length < line + 2 + size + 2) return;
      chunks.push(buffer.subarray(line + 2, line + 2 + size).toString());
      at.push(performance.now());
      buffer = buffer.subarray(line + 2 + size + 2);
    }
  });
  socket.write(`GET ${route} HTTP/1.1\r\nHost: ${board.host}\r\nAuthorization: Bearer ${board.token}\r\n\r\n`);
  return { head, chunks, at, close: () => socket.destroy() };
}

describe('the live actors on the dashboard', { timeout: 30_000 }, () => {
  let hall: TestHall;
  let board: Board;
  beforeAll(async () => {
    // The cron face too: its jobs are actors of their own.
    hall = await startTestHall({ config: CONFIG, adapters: defaultAdapters });
    board = await boardOf(hall.root);
  });
  afterAll(async () => {
    await hall.stop();
  });

  /** Makes the plain slot bjorn with a first mission (it stays), and waits for that run's end. */
  async function slotMade(): Promise<void> {
    const events = await hall.events('raider.done');
    try {
      const first = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'answer first' });
      await events.waitFor((e) => e.id === first.id);
    } finally {
      events.close();
    }
  }

  it('lists every live actor with its parent, machine and state', async () => {
    await slotMade();
    const reply = await httpRequest(board, '/api/actors', { headers: bearer(board) });
    expect(reply.status).toBe(200);
    const actors = JSON.parse(reply.body).actors;
    expect(actors[0]).toEqual({ id: 'hall', parent: null, kind: 'hall', state: 'running' });
    expect(actors).toContainEqual({ id: 'slot:bjorn', parent: 'hall', kind: 'slot', state: 'parallel' });
    // A cron job is an actor of its own, beside the hall.
    expect(actors).toContainEqual({ id: 'cron:nightly', parent: null, kind: 'cronJob', state: 'sleeping' });
  });

  it("streams a run's snapshot, then each state and event in order, then its end", async () => {
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'deaf-int 30' });
    await runStarted(run.events_path);
    const stream = await openEventStream(board, {}, `/api/actors/stream?id=${encodeURIComponent(`run:${run.id}`)}`);
    try {
      const first = JSON.parse((await stream.waitFor(() => true)).data);
      expect(Object.keys(first).sort()).toEqual(['events', 'id', 'kind', 'since', 'state', 'states', 'status', 'type']);
      expect(first).toMatchObject({
        type: 'actor.snapshot',
        id: `run:${run.id}`,
        kind: 'run',
        state: 'alive.running',
        states: ['alive', 'alive.running'],
        status: 'active',
      });
      expect(first.events.map((e: { event: string }) => e.event)).toEqual(expect.arrayContaining(['run.prepared', 'proc.spawned']));
      expect(Object.keys(first.events[0]).sort()).toEqual(expect.arrayContaining(['dir', 'event', 'time']));
      // Who sent what: the run's record and pid to its slot's host (for the hall), the process actor's pid.
      expect(first.events).toContainEqual(expect.objectContaining({ dir: 'sent', event: 'run.prepared', peer: 'runs' }));
      expect(first.events).toContainEqual(expect.objectContaining({ dir: 'received', event: 'proc.spawned', peer: 'process' }));
      expect(first.events).toContainEqual(expect.objectContaining({ dir: 'sent', event: 'run.spawned', peer: 'runs' }));
      expect(first.events).toContainEqual(expect.objectContaining({ dir: 'received', event: 'xstate.init', peer: 'runs' }));

      await hall.request({ cmd: 'cancel', id: run.id });
      await stream.waitFor((m) => JSON.parse(m.data).type === 'actor.stopped');
      const messages = stream.messages.map((m) => ActorWatchMessage.parse(JSON.parse(m.data)));
      const states = messages.flatMap((m) => (m.type === 'actor.state' ? [m.state] : []));
      // deaf-int ignores SIGINT and dies of SIGTERM: no SIGKILL.
      expect(states).toEqual(['alive.cancelling', 'alive.terminating', 'reaping', 'done']);
      const cancel = messages.find((m) => m.type === 'actor.event' && m.event === 'run.cancel');
      expect(cancel).toMatchObject({ type: 'actor.event', id: `run:${run.id}`, dir: 'received' });
      const stateMessage = messages.find((m) => m.type === 'actor.state');
      expect(Object.keys(stateMessage ?? {}).sort()).toEqual(['id', 'kind', 'since', 'state', 'states', 'status', 'type']);
      expect(messages.at(-2)).toMatchObject({ type: 'actor.state', state: 'done', status: 'done', states: ['done'] });
      expect(messages.at(-1)).toEqual({ type: 'actor.stopped', id: `run:${run.id}` });
      // In the order they happened.
      const cancelAt = messages.indexOf(cancel as ActorWatchMessage);
      expect(cancelAt).toBeLessThan(messages.findIndex((m) => m.type === 'actor.state' && m.state === 'alive.cancelling'));
    } finally {
      stream.close();
    }
  });

  it('writes what one turn of the hall tells of an actor at once: the event and the state it led to in one chunk', async () => {
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'deaf-int 30' });
    await runStarted(run.events_path);
    const stream = openChunks(board, `/api/actors/stream?id=${encodeURIComponent(`run:${run.id}`)}`);
    try {
      await eventually(() => expect(stream.chunks.join('')).toContain('"type":"actor.snapshot"'));
      expect(stream.head.text).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\nTransfer-Encoding: chunked/i);
      await hall.request({ cmd: 'cancel', id: run.id });
      await eventually(() => expect(stream.chunks.join('')).toContain('"type":"actor.stopped"'), 15_000);
      // The run takes run.cancel and moves to cancelling in one step: one write of the hall's carries both.
      const cancel = stream.chunks.find((chunk) => chunk.includes('"event":"run.cancel"'));
      expect(cancel).toContain('"state":"alive.cancelling"');
      const messages = stream.chunks.flatMap((chunk) => chunk.split('\n\n').filter((m) => m !== ''));
      expect(stream.chunks.length).toBeLessThan(messages.length);
      for (const m of messages) expect(ActorWatchMessage.safeParse(JSON.parse(m.replace(/^data: /, ''))).success).toBe(true);
    } finally {
      stream.close();
    }
  });

  it('with batch=1, sends the same messages in the same order, several to an `event: batch` message', async () => {
    const run = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: 'deaf-int 30' });
    await runStarted(run.events_path);
    const route = `/api/actors/stream?id=${encodeURIComponent(`run:${run.id}`)}`;
    const plain = await openEventStream(board, {}, route);
    const batched = await openEventStream(board, {}, `${route}&batch=1`);
    try {
      await plain.waitFor(() => true);
      await batched.waitFor(() => true);
      await hall.request({ cmd: 'cancel', id: run.id });
      await plain.waitFor((m) => JSON.parse(m.data).type === 'actor.stopped');
      await batched.waitFor((m) => JSON.parse(m.data).at(-1)?.type === 'actor.stopped');
      expect(plain.messages.every((m) => m.event === undefined)).toBe(true);
      expect(batched.messages.every((m) => m.event === 'batch')).toBe(true);
      const flat = batched.messages.flatMap((m) => ActorWatchBatch.parse(JSON.parse(m.data)));
      const single = plain.messages.map((m) => ActorWatchMessage.parse(JSON.parse(m.data)));
      // Both watches began while the run was running: the same snapshot (but its `since`, the time each asked), then the same messages.
      expect(flat[0]).toMatchObject({ type: 'actor.snapshot', state: 'alive.running' });
      expect(flat.slice(1)).toEqual(single.slice(1));
      expect(flat.map((m) => m.type)).toEqual(single.map((m) => m.type));
      // The run's end: its last events, its last state and actor.stopped, within one gap of each other.
      expect(batched.messages.length).toBeLessThan(flat.length);
    } finally {
      plain.close();
      batched.close();
    }
  });

  it('with batch=1, writes a busy actor at most once every BATCH_GAP_MS, however many turns its events take', async () => {
    await slotMade();
    const stream = openChunks(board, `/api/actors/stream?id=${encodeURIComponent('slot:bjorn')}&batch=1`);
    const t0 = performance.now();
    try {
      await eventually(() => expect(stream.chunks.join('')).toContain('"type":"actor.snapshot"'));
      // Missions one after another: each is its own few turns of the hall's (the slot takes it, its run starts, ends).
      let last = '';
      for (let i = 0; i < 30; i++) last = String((await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `answer ${i}` })).id);
      await eventually(() => expect(stream.chunks.join('')).toContain(`"event":"xstate.done.actor.run:${last}"`), 15_000);
      const elapsed = performance.now() - t0;
      const chunks = [...stream.chunks];
      const messages = chunks
        .join('')
        .split('\n\n')
        .filter((m) => m !== '');
      // One SSE message a write, each an array of the messages that waited.
      expect(messages.length).toBe(chunks.length);
      const flat = messages.flatMap((m) => {
        expect(m).toMatch(/^event: batch\ndata: \[/);
        return ActorWatchBatch.parse(JSON.parse(m.slice('event: batch\ndata: '.length)));
      });
      // Each mission: the slot took it and heard of its run's end, at least.
      expect(flat.filter((m) => m.type === 'actor.event').length).toBeGreaterThanOrEqual(30 * 2);
      // No two writes closer than the gap (a timer may fire a little early: 5 ms of room), all within the elapsed time.
      expect(chunks.length).toBeLessThanOrEqual(Math.floor(elapsed / (BATCH_GAP_MS - 5)) + 1);
    } finally {
      stream.close();
    }
  });

  it('with batch=1, waits FLOOD_GAP_MS after a write of FLOOD_BATCH messages or more: a slot under a burst', async () => {
    await slotMade();
    const stream = openChunks(board, `/api/actors/stream?id=${encodeURIComponent('slot:bjorn')}&batch=1`);
    try {
      await eventually(() => expect(stream.chunks.join('')).toContain('"type":"actor.snapshot"'));
      // 100 missions in one write of the socket's: the slot takes them in a few turns, their runs end in many.
      const frames = Array.from(
        { length: 100 },
        (_, i) => `${JSON.stringify({ type: 'command', payload: { cmd: 'spawn', name: 'bjorn', mission: `answer ${i}` } })}\n`,
      );
      const replies = await rawExchange(hall.socket, frames.join(''), 100);
      const last = String(replies.at(-1)?.id);
      await eventually(() => expect(stream.chunks.join('')).toContain(`"event":"xstate.done.actor.run:${last}"`), 30_000);
      const sizes = stream.chunks.map((chunk) => ActorWatchBatch.parse(JSON.parse(chunk.slice('event: batch\ndata: '.length))).length);
      const floods = sizes.flatMap((size, i) => (size >= FLOOD_BATCH && i + 1 < sizes.length ? [i] : []));
      expect(floods.length).toBeGreaterThan(0);
      // The write after a flood came no sooner than the flood's gap (half of it: the chunks' times are this process's reads).
      for (const i of floods) expect((stream.at[i + 1] ?? 0) - (stream.at[i] ?? 0)).toBeGreaterThanOrEqual(FLOOD_GAP_MS / 2);
    } finally {
      stream.close();
    }
  });

  it('answers 404 for an actor it does not have, 400 without an id', async () => {
    const gone = await httpRequest(board, '/api/actors/stream?id=run:bjorn-20000101-000000', { headers: bearer(board) });
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.body).error).toMatch(/no live actor run:bjorn-20000101-000000/);
    expect((await httpRequest(board, '/api/actors/stream', { headers: bearer(board) })).status).toBe(400);
  });
});

describe('the statecharts the build laid out', () => {
  const assets = loadPageAssets();

  it('are served for every machine, each state named and marked by its path', () => {
    for (const kind of ['run', 'slot', 'bindingQueue', 'hall', 'acpSession', 'question', 'cronJob']) {
      const chart = assets.files.get(`/app/statecharts/${kind}.svg`);
      expect(chart?.type, kind).toBe('image/svg+xml');
    }
    const run = assets.files.get('/app/statecharts/run.svg')?.body.toString() ?? '';
    for (const state of [
      'admitted',
      'queued',
      'alive',
      'alive.spawning',
      'alive.running',
      'alive.cancelling',
      'alive.terminating',
      'alive.killing',
      'reaping',
      'done',
      'refused',
    ])
      expect(run).toContain(`data-state="${state}" aria-label="${state}"`);
    // Delays and guards written out on their transitions.
    expect(run).toContain('>after cancelGrace [escalates]</text>');
    expect(run).toContain('>run.cancel</text>');
    // Nested: the running state's box is inside its parent's group.
    expect(run.indexOf('data-state="alive.running"')).toBeGreaterThan(run.indexOf('data-state="alive"'));
    expect(run).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });

  it('leave the scripts and styles a page can load at most 150 KiB gzipped', () => {
    const loaded = ['/app/bundle.js', '/app/bundle.css', '/vendor/uplot.mjs'];
    const sizes = loaded.map((route) => {
      const file = assets.files.get(route);
      if (!file) throw new Error(`${route} is not served: run npm run build first`);
      return gzipSync(file.body).length;
    });
    const total = sizes.reduce((a, b) => a + b, 0);
    // About 40 KiB when this was written (bundle.js 18 KiB, bundle.css 2 KiB, uPlot 21 KiB).
    expect(total).toBeLessThanOrEqual(150 * 1024);
  });
});
