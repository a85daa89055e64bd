/**
 * The file-backed state store on real files: what a commit waits for. A
 * queued mission or a run's start is fdatasync'ed before anybody hears of
 * it; a raider's pid and a run's end (which a restarting hall can find again
 * from the OS and the events file) are in the log at once and reach the disk
 * with the next fdatasync, without one of their own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileStateStore } from '../../src/adapters/storage/file-state-store.js';
import type { LedgerRun } from '../../src/adapters/storage/durable-state.js';
import { eventually, tempRoot } from '../support/test-hall.js';

// Before any spy replaces it.
const realFdatasync = fs.fdatasync;

const stores: FileStateStore[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const store of stores.splice(0)) await store.close().catch(() => {});
});

async function openStore(dir: string): Promise<FileStateStore> {
  const store = await FileStateStore.open(dir, { warn: () => {} });
  stores.push(store);
  return store;
}

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

function walLines(dir: string): string[] {
  return fs.readFileSync(path.join(dir, 'wal.jsonl'), 'utf8').split('\n').filter(Boolean);
}

/** A store in which run bjorn-1 has started (and is durable); fdatasyncs counted from here. */
async function storeWithStartedRun() {
  const dir = path.join(tempRoot('store-'), 'state');
  const store = await openStore(dir);
  store.apply({ op: 'run', run: ledgerRun('bjorn-1') });
  await store.commit();
  return { dir, store, syncs: vi.spyOn(fs, 'fdatasync') };
}

async function reopen(store: FileStateStore, dir: string): Promise<FileStateStore> {
  await store.close();
  stores.splice(stores.indexOf(store), 1);
  return openStore(dir);
}

describe('FileStateStore commits', () => {
  it("fdatasyncs a run's start before its commit resolves", async () => {
    const dir = path.join(tempRoot('store-'), 'state');
    const store = await openStore(dir);
    const syncs = vi.spyOn(fs, 'fdatasync');
    store.apply({ op: 'run', run: ledgerRun('bjorn-1') });
    await store.commit();
    expect(syncs).toHaveBeenCalledTimes(1);
    expect(walLines(dir).map((l) => JSON.parse(l).op)).toEqual(['run']);
  });

  it("writes a pid and a run's end at once, and syncs them with the next fdatasync or on their own shortly after", async () => {
    const { dir, store, syncs } = await storeWithStartedRun();

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
    const { store, syncs } = await storeWithStartedRun();
    store.apply({ op: 'pid', runId: 'bjorn-1', pid: 4242 });
    await store.checkpoint();
    expect(syncs).toHaveBeenCalledTimes(1);
  });

  it('a checkpoint made while the pid is being synced on its own resolves', async () => {
    const { store, syncs } = await storeWithStartedRun();
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
    await expect(Promise.race([checkpoint.then(() => 'done'), new Promise((r) => setTimeout(() => r('hung'), 5_000))])).resolves.toBe('done');
  });

  it('an operation that is owed an fdatasync takes the pending pid with it', async () => {
    const { dir, store, syncs } = await storeWithStartedRun();
    store.apply({ op: 'pid', runId: 'bjorn-1', pid: 4242 });
    store.apply({ op: 'run', run: ledgerRun('bjorn-2') });
    await store.commit();
    expect(syncs).toHaveBeenCalledTimes(1);
    const again = await reopen(store, dir);
    expect(again.state.runs.get('bjorn-1')?.pid).toBe(4242);
    expect(again.state.runs.has('bjorn-2')).toBe(true);
  });
});
