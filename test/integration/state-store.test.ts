/**
 * The file-backed state store on real files: what a commit waits for. A
 * queued mission or a run's start is fdatasync'ed before anybody hears of
 * it; a raider's pid and a run's end (which a restarting hall can find again
 * from the OS and the events file) are in the log at once and reach the disk
 * with the next fdatasync, without one of their own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { CHECKPOINT_DELAY_MS } from '../../src/adapters/storage/checkpoint-writer.js';
import { FileStateStore } from '../../src/adapters/storage/file-state-store.js';
import type { LedgerRun } from '../../src/ports/durable-state.js';
import { eventually, tempRoot } from '../support/hall-client.js';

// Before any spy replaces it.
const realFdatasync = fs.fdatasync;

const stores: FileStateStore[] = [];
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const store of stores.splice(0)) await store.close().catch(() => {});
});

async function openStore(dir: string, inlineSyncMs?: number): Promise<FileStateStore> {
  const store = await FileStateStore.open(dir, { warn: () => {}, ...(inlineSyncMs !== undefined ? { inlineSyncMs } : {}) });
  stores.push(store);
  return store;
}

/** The two ways the log is synced (write-ahead-log.ts), each held to one of them whatever the disk's speed. */
const THREAD_POOL = { where: 'on the thread pool', inlineSyncMs: 0, spy: () => vi.spyOn(fs, 'fdatasync') };
const EVENT_LOOP = { where: 'on the event loop', inlineSyncMs: 60_000, spy: () => vi.spyOn(fs, 'fdatasyncSync') };
const SYNC_MODES: Array<{ where: string; inlineSyncMs: number; spy: () => MockInstance }> = [THREAD_POOL, EVENT_LOOP];

function ledgerRun(id: string): LedgerRun {
  return {
    id,
    slot: 'bjorn',
    base_name: 'bjorn',
    entry: { id: `m-${id}`, name: 'bjorn', mission: 'go' },
    started_at: 1,
    events_path: `/tmp/${id}.events.jsonl`,
    log_path: '/tmp/bjorn.log',
  };
}

/** The log's lines; what follows them must be the log's padding, zero bytes only. */
function walLines(dir: string): string[] {
  const text = fs.readFileSync(path.join(dir, 'wal.jsonl'), 'utf8');
  const end = text.indexOf('\0');
  if (end !== -1) expect(text.slice(end)).toMatch(/^\0+$/);
  return text
    .slice(0, end === -1 ? text.length : end)
    .split('\n')
    .filter(Boolean);
}

/** A store in which run bjorn-1 has started (and is durable); fdatasyncs counted from here. */
async function storeWithStartedRun<S>(mode: { inlineSyncMs: number; spy: () => S }) {
  const dir = path.join(tempRoot('store-'), 'state');
  const store = await openStore(dir, mode.inlineSyncMs);
  store.apply({ op: 'run', run: ledgerRun('bjorn-1') });
  await store.commit();
  return { dir, store, syncs: mode.spy() };
}

async function reopen(store: FileStateStore, dir: string): Promise<FileStateStore> {
  await store.close();
  stores.splice(stores.indexOf(store), 1);
  return openStore(dir);
}

describe.each(SYNC_MODES)('FileStateStore commits, syncing $where', (mode) => {
  it("fdatasyncs a run's start before its commit resolves", async () => {
    const dir = path.join(tempRoot('store-'), 'state');
    const store = await openStore(dir, mode.inlineSyncMs);
    const syncs = mode.spy();
    store.apply({ op: 'run', run: ledgerRun('bjorn-1') });
    await store.commit();
    expect(syncs).toHaveBeenCalledTimes(1);
    expect(walLines(dir).map((l) => JSON.parse(l).op)).toEqual(['run']);
  });

  it('starts the fdatasync of an operation that is owed one by itself, before anybody waits for it', async () => {
    const dir = path.join(tempRoot('store-'), 'state');
    const store = await openStore(dir, mode.inlineSyncMs);
    const syncs = mode.spy();
    // Timers stand still: the background checkpoint (which syncs the log first) cannot be what syncs it.
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    // A run's record: its raider is spawned meanwhile, and the spawn's reply (which waits for the record) goes out with the pid.
    store.apply({ op: 'run', run: ledgerRun('bjorn-1') });
    for (let turn = 0; turn < 20 && syncs.mock.calls.length === 0; turn++) await new Promise((r) => setImmediate(r));
    expect(syncs).toHaveBeenCalledTimes(1);
    vi.useRealTimers();
    // The commit asked for later finds it done, or waits for that same fdatasync.
    await store.commit();
    expect(syncs).toHaveBeenCalledTimes(1);
  });

  it("writes a pid and a run's end at once, and syncs them with the next fdatasync or on their own shortly after", async () => {
    const { dir, store, syncs } = await storeWithStartedRun(mode);

    store.apply({ op: 'pid', runId: 'bjorn-1', pid: 4242 });
    store.apply({ op: 'end', runId: 'bjorn-1' });
    // In the log (and so in the kernel) before apply returns: a crash of the hall process loses neither.
    expect(walLines(dir).map((l) => JSON.parse(l).op)).toEqual(['run', 'pid', 'end']);
    // Nobody waits for them: a commit resolves without an fdatasync of their own.
    await store.commit();
    expect(syncs).not.toHaveBeenCalled();
    expect(store.state.runs.has('bjorn-1')).toBe(false);
    // They still reach the disk by themselves.
    await eventually(() => expect(syncs).toHaveBeenCalled(), 5_000);

    // A reopened store sees the run ended.
    const again = await reopen(store, dir);
    expect(again.state.runs.has('bjorn-1')).toBe(false);
  });

  it('a checkpoint (and so close) syncs the log with what was waiting, even before the files are written', async () => {
    const { store, syncs } = await storeWithStartedRun(mode);
    store.apply({ op: 'pid', runId: 'bjorn-1', pid: 4242 });
    await store.checkpoint();
    expect(syncs).toHaveBeenCalledTimes(1);
  });

  it('an operation that is owed an fdatasync takes the pending pid with it', async () => {
    const { dir, store, syncs } = await storeWithStartedRun(mode);
    store.apply({ op: 'pid', runId: 'bjorn-1', pid: 4242 });
    store.apply({ op: 'run', run: ledgerRun('bjorn-2') });
    await store.commit();
    expect(syncs).toHaveBeenCalledTimes(1);
    const again = await reopen(store, dir);
    expect(again.state.runs.get('bjorn-1')?.pid).toBe(4242);
    expect(again.state.runs.has('bjorn-2')).toBe(true);
  });
});

describe('FileStateStore syncs on the thread pool', () => {
  it('a checkpoint made while the pid is being synced on its own resolves', async () => {
    const { store, syncs } = await storeWithStartedRun(THREAD_POOL);
    // Hold the lazy fdatasync until the checkpoint waits on it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    syncs.mockImplementation(((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      void held.then(() => realFdatasync(fd, cb));
    }) as typeof fs.fdatasync);
    store.apply({ op: 'pid', runId: 'bjorn-1', pid: 4242 });
    await eventually(() => expect(syncs).toHaveBeenCalledTimes(1), 5_000);
    const checkpoint = store.checkpoint();
    release();
    await expect(Promise.race([checkpoint.then(() => 'done'), new Promise((r) => setTimeout(() => r('hung'), 5_000))])).resolves.toBe(
      'done',
    );
  });
});

describe('FileStateStore checkpoints', () => {
  const entry = { id: 'm-1', name: '1bjorn', mission: 'go' };
  const queueOp = { op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry } as const;

  it('a commit writes no state file; the file is current CHECKPOINT_DELAY_MS after the change, within the documented 100 ms', async () => {
    expect(CHECKPOINT_DELAY_MS).toBeLessThan(100);
    const dir = path.join(tempRoot('store-'), 'state');
    const store = await openStore(dir);
    const file = path.join(dir, '1bjorn.queue.json');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      store.apply(queueOp);
      await store.commit();
      expect(walLines(dir)).toHaveLength(1);
      expect(fs.existsSync(file)).toBe(false);
      vi.advanceTimersByTime(CHECKPOINT_DELAY_MS - 1);
      await store.commit();
      expect(fs.existsSync(file)).toBe(false);
      vi.advanceTimersByTime(1);
      // The checkpoint is under way: wait for its rename, a bounded number of turns.
      for (let turn = 0; turn < 10_000 && !fs.existsSync(file); turn++) await new Promise((r) => setImmediate(r));
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual([entry]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a file read after a change is current within the bound, on real timers', async () => {
    const dir = path.join(tempRoot('store-'), 'state');
    const store = await openStore(dir);
    const file = path.join(dir, '1bjorn.queue.json');
    store.apply(queueOp);
    await store.commit();
    await eventually(() => expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual([entry]), 2000, 5);
    store.apply({ op: 'remove', missionId: entry.id });
    await eventually(() => expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual([]), 2000, 5);
  });

  it('checkpoint writes every file at once and empties the log, which a reopened store does not need', async () => {
    const dir = path.join(tempRoot('store-'), 'state');
    const store = await openStore(dir);
    store.apply(queueOp);
    store.apply({ op: 'bind', binding: 'slot:1bjorn', session: 's-1' });
    await store.checkpoint();
    expect(walLines(dir)).toEqual([]);
    expect(JSON.parse(fs.readFileSync(path.join(dir, '1bjorn.queue.json'), 'utf8'))).toEqual([entry]);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8'))).toEqual({ 'slot:1bjorn': 's-1' });
    const again = await reopen(store, dir);
    expect(again.state.slotQueues.get('1bjorn')).toEqual([entry]);
  });

  it('recovers from the log alone when a state file is missing or half-written', async () => {
    const dir = path.join(tempRoot('store-'), 'state');
    const store = await openStore(dir);
    store.apply(queueOp);
    await store.commit();
    // What a hall killed before its checkpoint leaves: the log with the mission, the file torn.
    const crashed = path.join(tempRoot('store-'), 'state');
    fs.mkdirSync(crashed);
    fs.copyFileSync(path.join(dir, 'wal.jsonl'), path.join(crashed, 'wal.jsonl'));
    fs.writeFileSync(path.join(crashed, '1bjorn.queue.json'), '[{"id":"m-1","na');
    const warnings: string[] = [];
    const again = await FileStateStore.open(crashed, { warn: (m) => warnings.push(m) });
    stores.push(again);
    expect(again.state.slotQueues.get('1bjorn')).toEqual([entry]);
    expect(warnings).toEqual([expect.stringContaining('1bjorn.queue.json')]);
  });
});

describe('FileStateStore validates what it reads back', () => {
  const entry = (id: string) => ({ id, name: '1bjorn', mission: 'go' });
  const queueLine = (id: string) => JSON.stringify({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: entry(id) });

  async function openWith(files: Record<string, string>) {
    const dir = path.join(tempRoot('store-'), 'state');
    fs.mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    const warnings: string[] = [];
    const store = await FileStateStore.open(dir, { warn: (m) => warnings.push(m) });
    stores.push(store);
    return { dir, store, warnings };
  }

  it('reports a log line that is not an operation with its line number, skips it, and is silent about a torn last line', async () => {
    const wal = [queueLine('m-1'), '{"op":"queue","queue":{"kind":"slot"}}', 'not json', queueLine('m-2'), '{"op":"queue","que'].join('\n');
    const { dir, store, warnings } = await openWith({ 'wal.jsonl': wal });
    expect(store.state.slotQueues.get('1bjorn')).toEqual([entry('m-1'), entry('m-2')]);
    const file = path.join(dir, 'wal.jsonl');
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`^${file}:2: not an operation of this hall \\(.*queue.slot.*\\); line skipped$`)),
      expect.stringMatching(new RegExp(`^${file}:3: not valid JSON .*; line skipped$`)),
    ]);
  });

  it('cuts a torn last line off, so what is appended next starts on a line of its own', async () => {
    const { dir, store } = await openWith({ 'wal.jsonl': `${queueLine('m-1')}\n{"op":"queue","que` });
    // The open checkpoint emptied the log; what is appended now must replay.
    store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1bjorn' }, entry: entry('m-2') });
    await store.commit();
    expect(walLines(dir).map((l) => JSON.parse(l).entry.id)).toEqual(['m-2']);
  });

  it('reports a state file that is not JSON with its line, and records that do not match, and keeps the rest', async () => {
    const run = { id: 'bjorn-1', slot: 'bjorn', base_name: 'bjorn', entry: entry('m-9'), started_at: 1, events_path: '/e', log_path: '/l' };
    const { dir, store, warnings } = await openWith({
      '1bjorn.queue.json': '[\n{"id":"m-1","name":"1bjorn","mission":"go"},\n{"id":\n',
      'runs.json': JSON.stringify({ 'bjorn-1': run, 'bjorn-2': { id: 'bjorn-2', slot: 'bjorn' } }),
      'sessions.json': JSON.stringify({ 'slot:1bjorn': 's-1', 'slot:2bjorn': 7 }),
      '2bjorn.queue.json': JSON.stringify([{ id: 'm-3', name: '2bjorn', mission: 'go' }, 42]),
    });
    expect(store.state.slotQueues.get('1bjorn') ?? []).toEqual([]);
    expect(store.state.slotQueues.get('2bjorn')).toEqual([{ id: 'm-3', name: '2bjorn', mission: 'go' }]);
    expect([...store.state.runs.keys()]).toEqual(['bjorn-1']);
    expect(Object.fromEntries(store.state.sessions)).toEqual({ 'slot:1bjorn': 's-1' });
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`^${path.join(dir, '1bjorn.queue.json')}:3: not valid JSON`)),
      `${path.join(dir, '2bjorn.queue.json')}: entry 2 is not a mission; skipped`,
      `${path.join(dir, 'sessions.json')}: the session of slot:2bjorn is not a string; skipped`,
      expect.stringMatching(new RegExp(`^${path.join(dir, 'runs.json')}: run bjorn-2 is not a run record \\(.*\\); skipped$`)),
    ]);
  });
});
