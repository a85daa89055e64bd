import { describe, expect, it } from 'vitest';
import { createActor, fromCallback } from 'xstate';
import { MAX_TIMER_MS, ON_TIME_GRACE_MS, type CatchUp } from '../../src/domain/cron-plan.js';
import type { CronOutcome, CronResult } from '../../src/domain/cron-record.js';
import {
  cronJobMachine,
  nextFireAt,
  type ClaimInput,
  type FireInput,
  type ProbeInput,
  type CronJobEmitted,
  type CronJobInput,
  type RecordInput,
} from '../../src/machines/cron-job.machine.js';
import { ManualClock } from '../support/manual-clock.js';

const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();

interface JobOptions {
  cron: string;
  tz?: string;
  /** Wall-clock start. */
  start: string;
  /** The last slot handled (or the arming time); defaults to the start. */
  after?: string;
  coalesce?: boolean;
  catchUp?: CatchUp;
  maxSleepMs?: number;
  /** What the hall answers to a fire. */
  result?: CronResult;
}

/** A cron job machine under a manual clock, with fakes that answer at once and record what they were asked. */
function jobUnderTest(o: JobOptions) {
  const clock = new ManualClock();
  clock.advance(Date.parse(o.start));
  const world = {
    /** Added to the manual clock by readClock: a wall clock set forward or back. */
    jump: 0,
    inFlight: false,
    fired: [] as Array<FireInput & { at: number }>,
    recorded: [] as RecordInput[],
    probes: [] as ProbeInput[],
    bus: [] as Array<CronJobEmitted['event']>,
    timers: [] as number[],
  };
  const timedClock = {
    setTimeout: (fn: (...args: unknown[]) => void, ms: number) => {
      world.timers.push(ms);
      return clock.setTimeout(fn, ms);
    },
    clearTimeout: clock.clearTimeout,
  };
  const machine = cronJobMachine.provide({
    actors: {
      readClock: fromCallback(({ sendBack }) => sendBack({ type: 'clock', now: clock.now() + world.jump })),
      probe: fromCallback<{ type: string }, ProbeInput>(({ input, sendBack }) => {
        world.probes.push(input);
        sendBack({ type: 'probed', inFlight: world.inFlight });
      }),
      fire: fromCallback<{ type: string }, FireInput>(({ input, sendBack }) => {
        world.fired.push({ ...input, at: clock.now() + world.jump });
        const result = o.result ?? 'started';
        const outcome: CronOutcome = {
          slot: iso(input.slot),
          result,
          at: iso(clock.now()),
          mission_id: `m${world.fired.length}`,
          ...(result === 'started' ? { raider_id: `bjorn-${world.fired.length}` } : {}),
          ...(input.late ? { catch_up: true } : {}),
        };
        sendBack({ type: 'fired', outcome });
      }),
      record: fromCallback<{ type: string }, RecordInput>(({ input, sendBack }) => {
        world.recorded.push(input);
        sendBack({ type: 'recorded' });
      }),
    },
  });
  const actor = createActor(machine, {
    clock: timedClock,
    input: {
      id: 'nightly',
      name: 'bjorn',
      spec: { cron: o.cron, ...(o.tz !== undefined ? { tz: o.tz } : {}) },
      coalesce: o.coalesce ?? false,
      catchUp: o.catchUp ?? 'once',
      after: Date.parse(o.after ?? o.start),
      maxSleepMs: o.maxSleepMs ?? MAX_TIMER_MS,
      graceMs: ON_TIME_GRACE_MS,
    },
  });
  actor.on('bus', (e) => world.bus.push(e.event));
  actor.start();
  return {
    clock,
    world,
    actor,
    /** Moves the manual clock to an ISO time. */
    until(at: string) {
      clock.advance(Date.parse(at) - clock.now());
    },
    firedSlots: () => world.fired.map((f) => iso(f.slot)),
    next: () => {
      const snap = actor.getSnapshot();
      const at = nextFireAt(snap.context, String(snap.value));
      return at === null ? null : iso(at);
    },
  };
}

/** An hourly job `j` (catch_up: once) armed at `after`, for tests that give the machine their own actors. */
function hourlyJob(after: number, o: { coalesce: boolean }): CronJobInput {
  return {
    id: 'j',
    name: 'bjorn',
    spec: { cron: '0 * * * *', tz: 'UTC' },
    coalesce: o.coalesce,
    catchUp: 'once',
    after,
    maxSleepMs: MAX_TIMER_MS,
    graceMs: ON_TIME_GRACE_MS,
  };
}

/** A daily 06:00 UTC job with catch_up: skip, armed at `start` with the slot `after` handled. */
function dailySkippingJob(after: string, start: string): ReturnType<typeof jobUnderTest> {
  return jobUnderTest({ cron: '0 6 * * *', tz: 'UTC', after, start, catchUp: 'skip' });
}

/** The job fired nothing and recorded only `slot`, as skipped. */
function expectOnlySkipped(job: ReturnType<typeof jobUnderTest>, slot: string): void {
  expect(job.world.fired).toEqual([]);
  expect(job.world.recorded).toEqual([{ slot: Date.parse(slot), result: 'skipped' }]);
}

describe('cron job machine (simulated time)', () => {
  it('fires each occurrence at its time and sleeps in between', () => {
    const job = jobUnderTest({ cron: '*/15 * * * *', tz: 'UTC', start: '2026-05-04T10:07:00Z' });
    expect(job.next()).toBe('2026-05-04T10:15:00.000Z');
    expect(job.actor.getSnapshot().value).toBe('sleeping');
    job.until('2026-05-04T10:14:59.999Z');
    expect(job.world.fired).toEqual([]);
    job.until('2026-05-04T11:07:00Z');
    expect(job.world.fired.map((f) => [iso(f.slot), iso(f.at), f.late])).toEqual([
      ['2026-05-04T10:15:00.000Z', '2026-05-04T10:15:00.000Z', false],
      ['2026-05-04T10:30:00.000Z', '2026-05-04T10:30:00.000Z', false],
      ['2026-05-04T10:45:00.000Z', '2026-05-04T10:45:00.000Z', false],
      ['2026-05-04T11:00:00.000Z', '2026-05-04T11:00:00.000Z', false],
    ]);
    expect(job.world.bus[0]).toEqual({
      type: 'cron.fired',
      id: 'nightly',
      name: 'bjorn',
      raider_id: 'bjorn-1',
      mission_id: 'm1',
      slot: '2026-05-04T10:15:00.000Z',
    });
    expect(job.next()).toBe('2026-05-04T11:15:00.000Z');
  });

  it('6-field expressions fire every second; @daily and a time zone pick local midnight', () => {
    const fast = jobUnderTest({ cron: '*/2 * * * * *', start: '2026-05-04T10:00:00.500Z' });
    fast.until('2026-05-04T10:00:06.600Z');
    expect(fast.firedSlots()).toEqual(['2026-05-04T10:00:02.000Z', '2026-05-04T10:00:04.000Z', '2026-05-04T10:00:06.000Z']);
    const daily = jobUnderTest({ cron: '@daily', tz: 'America/New_York', start: '2026-05-04T10:00:00Z' });
    daily.until('2026-05-06T10:00:00Z');
    expect(daily.firedSlots()).toEqual(['2026-05-05T04:00:00.000Z', '2026-05-06T04:00:00.000Z']);
  });

  describe('a DST change day (Europe/Berlin)', () => {
    it('fall-back, 2026-10-25: 02:30 runs once; */30 in hour 2 runs twice, not in the repeated hour', () => {
      const once = jobUnderTest({ cron: '30 2 * * *', tz: 'Europe/Berlin', start: '2026-10-24T12:00:00Z' });
      const half = jobUnderTest({ cron: '*/30 2 * * *', tz: 'Europe/Berlin', start: '2026-10-24T12:00:00Z' });
      for (const job of [once, half]) job.until('2026-10-26T12:00:00Z');
      // 02:30 CEST is 00:30Z; the repeated 02:30 CET (01:30Z) does not run again.
      expect(once.firedSlots()).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
      expect(half.firedSlots()).toEqual([
        '2026-10-25T00:00:00.000Z',
        '2026-10-25T00:30:00.000Z',
        '2026-10-26T01:00:00.000Z',
        '2026-10-26T01:30:00.000Z',
      ]);
    });

    it('fall-back: an hourly job runs every real hour, 25 on that local day', () => {
      const job = jobUnderTest({ cron: '0 * * * *', tz: 'Europe/Berlin', start: '2026-10-24T21:59:00Z' });
      job.until('2026-10-25T22:59:00Z'); // local 2026-10-25 00:00 CEST .. 23:00 CET
      expect(job.world.fired).toHaveLength(25);
      expect(new Set(job.firedSlots()).size).toBe(25);
    });

    it('spring-forward, 2026-03-29: 02:30 does not exist and runs once at 03:30 CEST; the day has 23 hourly runs', () => {
      const once = jobUnderTest({ cron: '30 2 * * *', tz: 'Europe/Berlin', start: '2026-03-28T12:00:00Z' });
      once.until('2026-03-30T12:00:00Z');
      expect(once.firedSlots()).toEqual(['2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z']);
      const hourly = jobUnderTest({ cron: '0 * * * *', tz: 'Europe/Berlin', start: '2026-03-28T22:59:00Z' });
      hourly.until('2026-03-29T21:59:00Z'); // local 2026-03-29 00:00 CET .. 23:00 CEST
      expect(hourly.world.fired).toHaveLength(23);
    });
  });

  it('a yearly job never arms a timer longer than about 24 days and fires once, on time', () => {
    const job = jobUnderTest({ cron: '0 0 1 1 *', tz: 'UTC', start: '2026-01-02T00:00:00Z' });
    job.until('2027-03-01T00:00:00Z');
    expect(job.world.fired.map((f) => [iso(f.slot), iso(f.at)])).toEqual([['2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']]);
    expect(Math.max(...job.world.timers)).toBeLessThanOrEqual(MAX_TIMER_MS);
    expect(MAX_TIMER_MS).toBeLessThan(2 ** 31 - 1);
    // 364 days in chunks of at most 24 days: at least 16 wakes before the slot.
    expect(job.world.timers.length).toBeGreaterThanOrEqual(16);
  });

  describe('the wall clock is read again on every wake', () => {
    it('a clock set forward past a slot: the missed slot runs once as a catch-up (catch_up: once)', () => {
      const job = jobUnderTest({ cron: '0 12 * * *', tz: 'UTC', start: '2026-05-04T10:00:00Z', maxSleepMs: 60_000 });
      job.until('2026-05-04T10:30:00Z');
      job.world.jump = 3 * HOUR; // now 13:31 by the wall clock, although no timer ran long
      job.until('2026-05-04T10:31:00Z');
      expect(job.world.fired.map((f) => [iso(f.slot), f.late])).toEqual([['2026-05-04T12:00:00.000Z', true]]);
      expect(job.world.bus[0]).toMatchObject({ type: 'cron.fired', catch_up: true });
      expect(job.next()).toBe('2026-05-05T12:00:00.000Z');
    });

    it('a clock set forward past a slot with catch_up: skip records the slot as skipped and runs nothing', () => {
      const job = jobUnderTest({ cron: '0 12 * * *', tz: 'UTC', start: '2026-05-04T10:00:00Z', maxSleepMs: 60_000, catchUp: 'skip' });
      job.world.jump = 3 * HOUR;
      job.until('2026-05-04T10:01:00Z');
      expect(job.world.fired).toEqual([]);
      expect(job.world.recorded).toEqual([{ slot: Date.parse('2026-05-04T12:00:00Z'), result: 'skipped' }]);
      expect(job.world.bus).toEqual([]);
    });

    it('a clock set back: the timer runs out but the slot is not due yet, so the job sleeps on', () => {
      const job = jobUnderTest({ cron: '0 12 * * *', tz: 'UTC', start: '2026-05-04T10:00:00Z' });
      job.world.jump = -HOUR;
      job.until('2026-05-04T12:00:00Z');
      expect(job.world.fired).toEqual([]);
      expect(job.actor.getSnapshot().value).toBe('sleeping');
      job.until('2026-05-04T13:00:00Z');
      expect(job.world.fired.map((f) => iso(f.at))).toEqual(['2026-05-04T12:00:00.000Z']);
    });

    it('a timer that fires late within the grace is on time, not a catch-up', () => {
      const job = jobUnderTest({ cron: '0 12 * * *', tz: 'UTC', start: '2026-05-04T10:00:00Z', catchUp: 'skip' });
      job.world.jump = ON_TIME_GRACE_MS - 1; // the event loop stalled for just under a minute
      job.until('2026-05-04T12:00:00Z');
      expect(job.world.fired.map((f) => f.late)).toEqual([false]);
    });
  });

  describe('coalescing', () => {
    it('with coalesce, an occurrence whose previous one has not ended emits cron.coalesced and starts nothing', () => {
      const job = jobUnderTest({ cron: '0 * * * *', tz: 'UTC', start: '2026-05-04T09:30:00Z', coalesce: true });
      job.until('2026-05-04T10:00:00Z');
      job.world.inFlight = true;
      job.until('2026-05-04T12:00:00Z');
      job.world.inFlight = false;
      job.until('2026-05-04T13:00:00Z');
      expect(job.firedSlots()).toEqual(['2026-05-04T10:00:00.000Z', '2026-05-04T13:00:00.000Z']);
      expect(job.world.probes).toEqual(Array(4).fill({ binding: 'cron:nightly' }));
      expect(job.world.recorded.map((r) => [iso(r.slot), r.result])).toEqual([
        ['2026-05-04T11:00:00.000Z', 'coalesced'],
        ['2026-05-04T12:00:00.000Z', 'coalesced'],
      ]);
      expect(job.world.bus.map((e) => e.type)).toEqual(['cron.fired', 'cron.coalesced', 'cron.coalesced', 'cron.fired']);
      expect(job.world.bus[1]).toEqual({ type: 'cron.coalesced', id: 'nightly', name: 'bjorn', slot: '2026-05-04T11:00:00.000Z' });
    });

    it('without coalesce, every occurrence is handed over (it waits in the binding queue) and nothing is probed', () => {
      const job = jobUnderTest({ cron: '0 * * * *', tz: 'UTC', start: '2026-05-04T09:30:00Z', result: 'queued' });
      job.world.inFlight = true;
      job.until('2026-05-04T12:00:00Z');
      expect(job.world.fired).toHaveLength(3);
      expect(job.world.probes).toEqual([]);
      expect(job.world.bus.map((e) => [e.type, e.type === 'cron.fired' ? e.raider_id : undefined])).toEqual(
        Array(3).fill(['cron.fired', undefined]),
      );
    });
  });

  describe('start-up after the hall was down', () => {
    it('catch_up: once runs the latest missed slot once, then waits for the next', () => {
      const job = jobUnderTest({ cron: '0 6 * * *', tz: 'UTC', after: '2026-05-01T06:00:00Z', start: '2026-05-04T09:00:00Z' });
      expect(job.world.fired.map((f) => [iso(f.slot), f.late])).toEqual([['2026-05-04T06:00:00.000Z', true]]);
      expect(job.next()).toBe('2026-05-05T06:00:00.000Z');
      job.until('2026-05-05T06:00:00Z');
      expect(job.world.fired.map((f) => f.late)).toEqual([true, false]);
    });

    it('catch_up: skip runs none of the missed slots', () => {
      const job = dailySkippingJob('2026-05-01T06:00:00Z', '2026-05-04T09:00:00Z');
      expectOnlySkipped(job, '2026-05-04T06:00:00Z');
      expect(job.next()).toBe('2026-05-05T06:00:00.000Z');
    });

    it('a restart across a due slot fires that slot once, and a second restart does not fire it again', () => {
      // First hall: fires 06:00, stops at 06:30.
      const first = jobUnderTest({ cron: '0 6,7 * * *', tz: 'UTC', start: '2026-05-04T05:00:00Z' });
      first.until('2026-05-04T06:30:00Z');
      first.actor.stop();
      expect(first.firedSlots()).toEqual(['2026-05-04T06:00:00.000Z']);
      // Down over 07:00; the next hall starts at 07:10 with the last slot handled = 06:00.
      const second = jobUnderTest({ cron: '0 6,7 * * *', tz: 'UTC', after: '2026-05-04T06:00:00Z', start: '2026-05-04T07:10:00Z' });
      expect(second.world.fired.map((f) => [iso(f.slot), f.late])).toEqual([['2026-05-04T07:00:00.000Z', true]]);
      second.actor.stop();
      // A third start a second later, with 07:00 handled, fires nothing.
      const third = jobUnderTest({ cron: '0 6,7 * * *', tz: 'UTC', after: '2026-05-04T07:00:00Z', start: '2026-05-04T07:10:01Z' });
      expect(third.world.fired).toEqual([]);
      expect(third.next()).toBe('2026-05-05T06:00:00.000Z');
    });

    it('at start-up there is no grace: a slot passed seconds before the hall came up was missed', () => {
      const job = dailySkippingJob('2026-05-03T06:00:00Z', '2026-05-04T06:00:30Z');
      expectOnlySkipped(job, '2026-05-04T06:00:00Z');
    });

    it('a job armed just now has missed nothing', () => {
      const job = jobUnderTest({ cron: '0 6 * * *', tz: 'UTC', start: '2026-05-04T09:00:00Z' });
      expect(job.world.fired).toEqual([]);
      expect(job.world.recorded).toEqual([]);
    });
  });

  it('an occurrence the hall answered with an error emits no cron.fired and is not fired again', () => {
    const job = jobUnderTest({ cron: '0 * * * *', tz: 'UTC', start: '2026-05-04T09:30:00Z', result: 'error' });
    job.until('2026-05-04T10:30:00Z');
    expect(job.world.fired).toHaveLength(1);
    expect(job.world.bus).toEqual([]);
    expect(job.next()).toBe('2026-05-04T11:00:00.000Z');
  });

  it('a failing hand-over still counts the slot as handled (never twice)', () => {
    const clock = new ManualClock();
    clock.advance(Date.parse('2026-05-04T09:59:00Z'));
    let fires = 0;
    const machine = cronJobMachine.provide({
      actors: {
        readClock: fromCallback(({ sendBack }) => sendBack({ type: 'clock', now: clock.now() })),
        probe: fromCallback(({ sendBack }) => sendBack({ type: 'probed', inFlight: false })),
        fire: fromCallback(({ sendBack }) => {
          fires++;
          sendBack({ type: 'failed', error: 'disk full' });
        }),
        record: fromCallback(({ sendBack }) => sendBack({ type: 'recorded' })),
      },
    });
    const actor = createActor(machine, {
      clock,
      input: hourlyJob(clock.now(), { coalesce: false }),
    }).start();
    clock.advance(90 * 60_000);
    expect(fires).toBe(2);
    expect(actor.getSnapshot().value).toBe('sleeping');
  });

  it('on a shared cluster an occurrence another hall claimed is neither fired nor coalesced here, and the job plans past it', () => {
    const clock = new ManualClock();
    clock.advance(Date.parse('2026-05-04T09:59:00Z'));
    const fired: number[] = [];
    const probes: number[] = [];
    const machine = cronJobMachine.provide({
      actors: {
        readClock: fromCallback(({ sendBack }) => sendBack({ type: 'clock', now: clock.now() })),
        // This hall wins the odd hours' occurrences only.
        claimSlot: fromCallback<{ type: string }, ClaimInput>(({ input, sendBack }) =>
          sendBack({ type: new Date(input.slot).getUTCHours() % 2 === 1 ? 'claimed' : 'taken' }),
        ),
        probe: fromCallback<{ type: string }, ProbeInput>(({ sendBack }) => {
          probes.push(clock.now());
          sendBack({ type: 'probed', inFlight: false });
        }),
        fire: fromCallback<{ type: string }, FireInput>(({ input, sendBack }) => {
          fired.push(input.slot);
          sendBack({ type: 'fired', outcome: { slot: iso(input.slot), result: 'queued', at: iso(clock.now()) } });
        }),
        record: fromCallback(({ sendBack }) => sendBack({ type: 'recorded' })),
      },
    });
    const bus: Array<CronJobEmitted['event']> = [];
    const actor = createActor(machine, {
      clock,
      input: hourlyJob(clock.now(), { coalesce: true }),
    });
    actor.on('bus', (e) => bus.push(e.event));
    actor.start();
    clock.advance(4 * 3600_000);
    expect(fired.map(iso)).toEqual(['2026-05-04T11:00:00.000Z', '2026-05-04T13:00:00.000Z']);
    // Only the occurrences this hall claimed were probed (coalesce) and announced.
    expect(probes).toHaveLength(2);
    expect(bus.map((e) => e.slot)).toEqual(['2026-05-04T11:00:00.000Z', '2026-05-04T13:00:00.000Z']);
    expect(actor.getSnapshot().value).toBe('sleeping');
    expect(actor.getSnapshot().context.after).toBe(Date.parse('2026-05-04T13:00:00Z'));
  });

  it('an expression with no occurrence left is exhausted and arms no timer', () => {
    // 31 April never comes: cron-parser rejects it (the config check does too, so a hall never gets here).
    const job = jobUnderTest({ cron: '0 0 31 4 *', tz: 'UTC', start: '2026-05-04T10:00:00Z' });
    expect(job.actor.getSnapshot().value).toBe('exhausted');
    expect(job.next()).toBeNull();
    expect(job.clock.pending()).toBe(0);
  });
});
