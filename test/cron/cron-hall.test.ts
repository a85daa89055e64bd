import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HallStartError } from '../../src/actors/hall-supervisor.js';
import { cronAdapter } from '../../src/adapters/cron/cron-adapter.js';
import { eventually, runCli, startTestHall, tempRoot, type Json, type TestHall } from '../support/test-hall.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

const HOUR = 3600_000;
const adapters = [cronAdapter()];

function writeState(root: string, file: string, value: unknown): void {
  const dir = path.join(root, '.raider-hall/state');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, file), JSON.stringify(value));
}

function readCronState(root: string): Json {
  return JSON.parse(fs.readFileSync(path.join(root, '.raider-hall/state/cron.json'), 'utf8')) as Json;
}

/** The latest whole hour at or before now, as the hourly jobs below see it. */
function currentHour(): number {
  return Math.floor(Date.now() / HOUR) * HOUR;
}

describe('cron through a real hall', () => {
  it('fires a 6-field job: cron.fired names the run, the run is bound cron:ID, status shows next and the last outcome', async () => {
    // Once a minute, two seconds from now: the run ends long before the next occurrence. A hall
    // whose start took longer than that (a loaded machine) waits a minute for it: start over then.
    let second = 0;
    let events: Json[] = [];
    for (let attempt = 0; ; attempt++) {
      second = (new Date().getUTCSeconds() + 2) % 60;
      const seen: Json[] = [];
      hall = await startTestHall({
        adapters,
        config: `raiders: { bjorn: {} }\ncron:\n  - { id: tick, name: bjorn, cron: '${second} * * * * *', mission: 'answer tick' }\n`,
        // From the hall's first event: a tap subscribing after the start could miss the firing.
        onEvent: (e) => seen.push(e),
      });
      events = seen;
      const next = Date.parse((await hall.request({ cmd: 'status' })).cron.tick.next as string);
      if (seen.some((e) => e.type === 'cron.fired') || next - Date.now() < 10_000 || attempt === 2) break;
      await hall.stop();
    }
    const fired = await eventually(() => {
      const e = events.find((e) => e.type === 'cron.fired' && e.raider_id !== undefined);
      expect(e).toBeDefined();
      return e as Json;
    }, 15_000);
    expect(fired).toMatchObject({ id: 'tick', name: 'bjorn', slot: expect.stringMatching(/Z$/), mission_id: expect.any(String) });
    const done = await eventually(() => {
      const e = events.find((e) => e.type === 'raider.done' && e.id === fired.raider_id);
      expect(e).toBeDefined();
      return e as Json;
    }, 15_000);
    expect(done).toMatchObject({ status: 'completed', response: 'tick', binding: 'cron:tick' });
    const status = await eventually(async () => {
      const s = await hall!.request({ cmd: 'status' });
      const job = s.cron?.tick;
      expect(job?.last?.status).toBe('completed');
      return s;
    });
    const job = status.cron.tick as Json;
    expect(job).toMatchObject({ name: 'bjorn', cron: `${second} * * * * *`, coalesce: false, catch_up: 'once', state: 'sleeping' });
    expect(Date.parse(job.next as string) - Date.parse(fired.slot as string)).toBe(60_000);
    expect(job.last).toMatchObject({ result: 'started', raider_id: expect.any(String), mission_id: expect.any(String) });
  });

  it('coalesce: true drops an occurrence while the previous run goes; without it the occurrence waits in the binding queue', async () => {
    hall = await startTestHall({
      adapters,
      config:
        'raiders: { bjorn: {} }\ncron:\n' +
        "  - { id: lone, name: bjorn, cron: '* * * * * *', mission: 'wait 2', coalesce: true }\n" +
        "  - { id: line, name: bjorn, cron: '* * * * * *', mission: 'wait 2' }\n",
    });
    const tap = await hall.events('');
    const coalesced = await tap.waitFor((e) => e.type === 'cron.coalesced' && e.id === 'lone');
    expect(coalesced).toMatchObject({ name: 'bjorn', slot: expect.any(String) });
    const queued = await tap.waitFor((e) => e.type === 'raider.queued' && e.binding === 'cron:line');
    expect(queued).toMatchObject({ slot: 'bjorn', queue_depth: 1 });
    // Two runs of lone never overlap.
    let running = 0;
    for (const e of tap.all) {
      if (e.binding !== 'cron:lone') continue;
      if (e.type === 'raider.spawned') running++;
      if (e.type === 'raider.done') running--;
      expect(running).toBeLessThanOrEqual(1);
    }
    const status = await hall.request({ cmd: 'status' });
    expect(status.binding_queues['cron:line']).toBeGreaterThanOrEqual(1);
    expect(status.cron.lone.last.result).toBe('coalesced');
    tap.close();
  });

  it('a restart across a due slot runs it once (catch_up: once) or not at all (skip), and a second restart fires nothing', async () => {
    // The test reasons about the current hour; not in its last seconds.
    const left = HOUR - (Date.now() % HOUR);
    if (left < 10_000) await new Promise((r) => setTimeout(r, left + 100));
    const root = tempRoot();
    const threeHoursAgo = new Date(currentHour() - 3 * HOUR).toISOString();
    const config =
      'raiders: { bjorn: {} }\ncron:\n' +
      "  - { id: hourly, name: bjorn, cron: '0 * * * *', tz: UTC, mission: 'answer caught up' }\n" +
      "  - { id: skipper, name: bjorn, cron: '0 * * * *', tz: UTC, mission: 'answer no', catch_up: skip }\n";
    writeState(root, 'cron.json', {
      hourly: { slot: threeHoursAgo, since: threeHoursAgo },
      skipper: { slot: threeHoursAgo, since: threeHoursAgo },
      gone: { slot: threeHoursAgo, since: threeHoursAgo },
    });
    const expectedSlot = new Date(currentHour()).toISOString();

    hall = await startTestHall({ root, adapters, config });
    const tap = await hall.events('');
    const status = await eventually(async () => {
      const s = await hall!.request({ cmd: 'status' });
      expect(s.cron.hourly.last?.status).toBe('completed');
      expect(s.cron.skipper.last?.result).toBe('skipped');
      return s;
    });
    // The cron.fired came before we subscribed; the record and the run tell the story.
    expect(status.cron.hourly.last).toMatchObject({ slot: expectedSlot, result: 'started', catch_up: true });
    expect(status.cron.skipper.last).toMatchObject({ slot: expectedSlot, result: 'skipped' });
    // cron.json is a checkpoint: it follows within a bounded delay (docs/storage.md).
    await eventually(
      () => {
        const state = readCronState(root);
        expect(Object.keys(state).sort()).toEqual(['hourly', 'skipper']);
        expect(state.hourly.slot).toBe(expectedSlot);
      },
      2000,
      10,
    );
    await hall.stop();
    tap.close();

    hall = await startTestHall({ root, adapters, config });
    const tap2 = await hall.events('');
    await new Promise((r) => setTimeout(r, 300));
    const again = await hall.request({ cmd: 'status' });
    expect(again.running).toBe(0);
    expect(again.cron.hourly.last).toEqual(status.cron.hourly.last);
    expect(tap2.all.filter((e) => e.type.startsWith('cron.') || e.type === 'raider.spawned')).toEqual([]);
    expect(again.cron.hourly.next).toBe(new Date(currentHour() + HOUR).toISOString());
    tap2.close();
  });

  it('an occurrence half handed over when the hall died is never fired again: found waiting, or not found', async () => {
    const root = tempRoot();
    const slot = new Date(currentHour()).toISOString();
    writeState(root, 'cron.json', {
      waiting: { slot, since: slot, pending: { slot, mission_id: 'm-waiting' } },
      lost: { slot, since: slot, pending: { slot, mission_id: 'm-lost' } },
    });
    // The hall took m-waiting (it waits behind a busy binding); m-lost never arrived.
    writeState(root, 'binding_queues.json', {
      'cron:waiting': [{ id: 'm-waiting', name: 'bjorn', mission: 'answer late', binding: 'cron:waiting' }],
    });
    hall = await startTestHall({
      root,
      adapters,
      config:
        'raiders: { bjorn: {} }\ncron:\n' +
        "  - { id: waiting, name: bjorn, cron: '0 * * * *', tz: UTC, mission: 'answer late' }\n" +
        "  - { id: lost, name: bjorn, cron: '0 * * * *', tz: UTC, mission: 'answer lost' }\n",
    });
    const status = await hall.request({ cmd: 'status' });
    // The boot hands out what waited before the cron jobs look: found waiting or already started.
    expect(status.cron.waiting.last).toMatchObject({ slot, mission_id: 'm-waiting' });
    expect(['queued', 'started']).toContain(status.cron.waiting.last.result);
    expect(status.cron.lost.last).toMatchObject({
      slot,
      result: 'unknown',
      mission_id: 'm-lost',
      error: expect.stringContaining('not fired again'),
    });
    await eventually(() => expect(readCronState(root).lost.pending).toBeUndefined(), 2000, 10);
  });

  it('a job that cannot work is a configuration error naming the job, in our words: the hall refuses to start (exit 3)', async () => {
    const root = tempRoot();
    fs.writeFileSync(
      path.join(root, '.raider-hall.yml'),
      'raiders: { bjorn: {} }\ncron:\n' +
        "  - { id: fine, name: bjorn, cron: '@daily', mission: 'answer fine' }\n" +
        "  - { id: broken, name: bjorn, cron: '61 * * * *', mission: 'answer broken' }\n" +
        "  - { id: daily, name: bjorn, cron: 'every day', mission: 'answer daily' }\n" +
        "  - { id: quiet, name: bjorn, cron: '@hourly' }\n",
    );
    const err = await startTestHall({ root, adapters }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HallStartError);
    expect((err as HallStartError).exitCode).toBe(3);
    const file = path.join(path.resolve(root), '.raider-hall.yml');
    const valid =
      'a valid schedule is 5 fields such as "0 9 * * 1-5" (09:00 on weekdays), 6 with seconds first, or an alias such as @daily';
    expect((err as Error).message.split('\n')).toEqual([
      `${file}: cron[1].cron: job "broken": invalid cron expression "61 * * * *": the minute field "61": 61 is outside 0-59; ${valid}`,
      `${file}: cron[2].cron: job "daily": invalid cron expression "every day": 2 fields where a schedule has 5 (minute, hour, day of month, month, day of week) or 6 (seconds first); ${valid}`,
      `${file}: cron[3].mission: job "quiet" has no mission: write the text each run is given, e.g. mission: 'check the nightly build'`,
    ]);
    expect(fs.existsSync(path.join(root, '.raider-hall.socket'))).toBe(false);
    // The same through `raider hall start`, which runs the default adapters.
    const cli = await runCli(['hall', 'start', root, '--quiet']);
    expect(cli.code).toBe(3);
    expect(cli.stderr).toContain('job "broken": invalid cron expression "61 * * * *"');
    expect(cli.stderr).toContain('job "quiet" has no mission');
    expect(cli.stderr).not.toContain('cannot resolve alias');
  });

  it('a job for a raider with no entry is named at start, as a spawn of it is told', async () => {
    hall = await startTestHall({
      adapters,
      config:
        'raiders: { bjorn: {} }\ncron:\n' +
        "  - { id: ok, name: 2bjorn, cron: '0 0 1 1 *', mission: 'answer ok' }\n" +
        "  - { id: typo, name: bjrn, cron: '0 0 1 1 *', mission: 'answer typo' }\n",
    });
    expect(hall.logs.filter((l) => l.includes('has no entry'))).toEqual([
      `cron job "typo": bjrn has no entry in .raider-hall.yml; it runs with the raider's defaults`,
    ]);
  });

  it('a config without cron jobs runs no cron adapter', async () => {
    hall = await startTestHall({ adapters, config: 'raiders: { bjorn: {} }\n' });
    expect((await hall.request({ cmd: 'status' })).cron).toBeUndefined();
  });
});
