/**
 * keep_events (src/adapters/storage/events-retention.ts) on real files: the
 * newest files of a slot stay, whatever runs of it are still going.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventsRetention } from '../../src/adapters/storage/events-retention.js';
import { tempRoot } from '../support/temp-roots.js';

const logsDir = (): string => tempRoot('events-retention-');

const files = (dir: string): string[] =>
  fs
    .readdirSync(dir)
    .map((name) => name.replace(/\.events\.jsonl$/, ''))
    .sort();

describe('events retention', () => {
  it('keeps the newest files and a live old run, and removes no newer file in its place', async () => {
    const dir = logsDir();
    // Collected, not thrown: a removal's warning comes from a thread-pool callback.
    const warnings: string[] = [];
    const retention = new EventsRetention(dir, 3, (message) => warnings.push(message));
    retention.load();
    const ids = ['bjorn-1000', 'bjorn-1000.2', 'bjorn-1000.3', 'bjorn-1000.4', 'bjorn-1000.5'];
    for (const id of ids) {
      fs.writeFileSync(path.join(dir, `${id}.events.jsonl`), '');
      retention.started(id);
    }
    // The first run still goes; the others end, the last one last.
    const live = new Set(['bjorn-1000']);
    await retention.ended('bjorn', (id) => live.has(id));
    expect(files(dir)).toEqual(['bjorn-1000', 'bjorn-1000.3', 'bjorn-1000.4', 'bjorn-1000.5']);
    // It ends: now it is older than the newest three.
    live.clear();
    await retention.ended('bjorn', (id) => live.has(id));
    expect(files(dir)).toEqual(['bjorn-1000.3', 'bjorn-1000.4', 'bjorn-1000.5']);
    expect(warnings).toEqual([]);
  });

  it('tells its listeners once the removed files are gone, and only when it removed some', async () => {
    const dir = logsDir();
    const warnings: string[] = [];
    const retention = new EventsRetention(dir, 1, (message) => warnings.push(message));
    retention.load();
    const seen: string[][] = [];
    const off = retention.onPruned(() => seen.push(files(dir)));
    for (const id of ['ivar-1000', 'ivar-1000.2']) {
      fs.writeFileSync(path.join(dir, `${id}.events.jsonl`), '');
      retention.started(id);
    }
    await retention.ended('ivar', () => false);
    // What a listener sees: the files as they are after the removal (the dashboard lists them again then).
    expect(seen).toEqual([['ivar-1000.2']]);
    await retention.ended('ivar', () => false);
    expect(seen).toHaveLength(1);
    off();
    fs.writeFileSync(path.join(dir, 'ivar-1000.3.events.jsonl'), '');
    retention.started('ivar-1000.3');
    await retention.ended('ivar', () => false);
    expect(files(dir)).toEqual(['ivar-1000.3']);
    expect(seen).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it('knows the files a previous hall left, and the newest id of each slot', () => {
    const dir = logsDir();
    for (const id of ['bjorn-1000.10', 'bjorn-1000.9', 'ivar-999']) fs.writeFileSync(path.join(dir, `${id}.events.jsonl`), '');
    expect(new EventsRetention(dir, 3, () => undefined).load()).toEqual({ bjorn: { sec: 1000, n: 10 }, ivar: { sec: 999, n: 1 } });
  });
});
