/**
 * The checkpoint writer's back-off: a background checkpoint is due 50 ms
 * after a change, or 4 times as long as rendering the last one took when that
 * is longer (docs/storage.md), so a long queue's file is not rendered again
 * every 50 ms. Rendering time is read from `performance.now`, set here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CHECKPOINT_DELAY_MS, CheckpointWriter } from '../../src/adapters/storage/checkpoint-writer.js';
import { DurableState } from '../../src/ports/durable-state.js';

const dirs: string[] = [];
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function setup(): { writer: CheckpointWriter; change: () => void; due: () => number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'checkpoint-writer-'));
  dirs.push(dir);
  const state = new DurableState();
  let calls = 0;
  const writer = new CheckpointWriter(dir, state, () => calls++);
  let n = 0;
  const change = () => {
    n++;
    state.apply({ op: 'queue', queue: { kind: 'slot', slot: '1q' }, entry: { id: `m-${n}`, mission: 'wait', name: '1q' } }, writer.dirty);
    writer.schedule();
  };
  return { writer, change, due: () => calls };
}

/** Writes the dirty files as if rendering them took `renderMs` (one file: two readings of the clock). */
async function writeTaking(writer: CheckpointWriter, renderMs: number): Promise<void> {
  const now = vi.spyOn(performance, 'now');
  now.mockReturnValueOnce(1000).mockReturnValueOnce(1000 + renderMs);
  await writer.write();
  now.mockRestore();
}

/** The ms from a change until the next checkpoint is due, on a fake clock. */
function delayOfNext(change: () => void, due: () => number): number {
  const before = due();
  change();
  let waited = 0;
  while (due() === before && waited < 10_000) {
    vi.advanceTimersByTime(1);
    waited++;
  }
  return waited;
}

describe('the checkpoint writer', () => {
  it('spaces background checkpoints by 4 times their render time when that is over 50 ms, and goes back to 50 ms', async () => {
    const { writer, change, due } = setup();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    expect(delayOfNext(change, due)).toBe(CHECKPOINT_DELAY_MS);

    await writeTaking(writer, 100);
    expect(delayOfNext(change, due)).toBe(400);

    await writeTaking(writer, 5);
    expect(delayOfNext(change, due)).toBe(CHECKPOINT_DELAY_MS);
  });
});
