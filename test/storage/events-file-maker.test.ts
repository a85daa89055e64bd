/** Events files made from a spare: empty, exclusive, and never sharing a file a crash left linked. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventsFileMaker, SPARE_EVENTS_FILE } from '../../src/adapters/storage/events-file-maker.js';
import { eventually, tempRoot } from '../support/hall-client.js';

function makerIn() {
  const dir = tempRoot('events-maker-');
  return { dir, maker: new EventsFileMaker(dir), spare: path.join(dir, SPARE_EVENTS_FILE) };
}

describe('EventsFileMaker', () => {
  it('makes the next file from the spare it made after the last one', async () => {
    const { dir, maker, spare } = makerIn();
    maker.create(path.join(dir, 'a-1.events.jsonl'));
    await eventually(() => expect(maker.hasSpare).toBe(true));
    const spareInode = fs.statSync(spare).ino;
    const second = path.join(dir, 'a-2.events.jsonl');
    maker.create(second);
    expect(fs.statSync(second).ino).toBe(spareInode);
    expect(fs.statSync(second).nlink).toBe(1);
    expect(fs.readFileSync(second, 'utf8')).toBe('');
    // The next spare is a file of its own.
    await eventually(() => expect(maker.hasSpare).toBe(true));
    expect(fs.statSync(spare).ino).not.toBe(spareInode);
  });

  it('refuses a name that exists, with the spare and without it', async () => {
    const { dir, maker } = makerIn();
    const taken = path.join(dir, 'a-1.events.jsonl');
    fs.writeFileSync(taken, 'earlier run\n');
    expect(() => maker.create(taken)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    maker.create(path.join(dir, 'a-2.events.jsonl'));
    await eventually(() => expect(maker.hasSpare).toBe(true));
    expect(() => maker.create(taken)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    expect(fs.readFileSync(taken, 'utf8')).toBe('earlier run\n');
    // The spare was not used up.
    expect(maker.hasSpare).toBe(true);
  });

  it('never hands out a spare a crashed hall left linked to a run file', async () => {
    const { dir, maker, spare } = makerIn();
    const earlier = path.join(dir, 'a-1.events.jsonl');
    fs.writeFileSync(earlier, '{"type":"run.finished"}\n');
    fs.linkSync(earlier, spare);
    const next = path.join(dir, 'a-2.events.jsonl');
    maker.create(next);
    expect(fs.statSync(next).ino).not.toBe(fs.statSync(earlier).ino);
    await eventually(() => expect(maker.hasSpare).toBe(true));
    expect(fs.statSync(spare).ino).not.toBe(fs.statSync(earlier).ino);
    // The spare it hands out next is an empty file of its own; the earlier run's file is left whole, linked once.
    const third = path.join(dir, 'a-3.events.jsonl');
    maker.create(third);
    expect(fs.statSync(third).ino).not.toBe(fs.statSync(earlier).ino);
    expect(fs.readFileSync(third, 'utf8')).toBe('');
    expect(fs.statSync(earlier).nlink).toBe(1);
    expect(fs.readFileSync(earlier, 'utf8')).toBe('{"type":"run.finished"}\n');
  });

  it('makes the directory again when it was removed, spare or not', async () => {
    const { dir, maker } = makerIn();
    maker.create(path.join(dir, 'a-1.events.jsonl'));
    await eventually(() => expect(maker.hasSpare).toBe(true));
    fs.rmSync(dir, { recursive: true });
    const file = path.join(dir, 'a-2.events.jsonl');
    maker.create(file);
    expect(fs.readFileSync(file, 'utf8')).toBe('');
  });

  it('removes its spare when closed', async () => {
    const { dir, maker, spare } = makerIn();
    maker.create(path.join(dir, 'a-1.events.jsonl'));
    await eventually(() => expect(maker.hasSpare).toBe(true));
    maker.close();
    expect(fs.existsSync(spare)).toBe(false);
    expect(fs.readdirSync(dir)).toEqual(['a-1.events.jsonl']);
  });
});
