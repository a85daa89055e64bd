import { describe, expect, it } from 'vitest';
import { cronConfigErrors } from '../../src/domain/cron-config.js';
import { bindingInFlight, MAX_TIMER_MS, occurrenceAction, planWake, sleepMs } from '../../src/domain/cron-plan.js';
import {
  handledUpTo,
  noteRunEvent,
  outcomeFromReply,
  readCronRecord,
  resolvePending,
  withOutcome,
  withPending,
  type CronOutcome,
} from '../../src/domain/cron-record.js';
import { cronProblem, latestSlot, nextSlot } from '../../src/domain/cron-schedule.js';

const t = (s: string) => Date.parse(s);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const berlin = (cron: string) => ({ cron, tz: 'Europe/Berlin' });

describe('cron schedule', () => {
  it('accepts 5- and 6-field expressions and aliases; names what is wrong otherwise', () => {
    for (const cron of ['*/15 * * * *', '*/5 * * * * *', '@daily', '@hourly', '0 9 * * 1-5']) expect(cronProblem({ cron })).toBeNull();
    const valid =
      'a valid schedule is 5 fields such as "0 9 * * 1-5" (09:00 on weekdays), 6 with seconds first, or an alias such as @daily';
    expect(cronProblem({ cron: '61 * * * *' })).toBe(`the minute field "61": 61 is outside 0-59; ${valid}`);
    expect(cronProblem({ cron: '0 9 * * mon-fry' })).toBe(`the day of week field "mon-fry": not a number, range, step or name; ${valid}`);
    expect(cronProblem({ cron: '* * * 13 *' })).toBe(`the month field "13": 13 is outside 1-12; ${valid}`);
    expect(cronProblem({ cron: '70 * * * * *' })).toBe(`the second field "70": 70 is outside 0-59; ${valid}`);
    expect(cronProblem({ cron: 'every day' })).toBe(
      `2 fields where a schedule has 5 (minute, hour, day of month, month, day of week) or 6 (seconds first); ${valid}`,
    );
    expect(cronProblem({ cron: '* * *' })).toMatch(/^3 fields where/);
    expect(cronProblem({ cron: '* * * * * * *' })).toMatch(/^7 fields where/);
    expect(cronProblem({ cron: '@fortnightly' })).toBe(
      `"@fortnightly" is not an alias (@yearly, @annually, @monthly, @weekly, @daily, @hourly, @minutely, @secondly, @weekdays, @weekends); ${valid}`,
    );
    expect(cronProblem({ cron: '0 0 31 2 *' })).toMatch(/^no time matches it \(/);
    expect(cronProblem({ cron: '   ' })).toBe(`the expression is empty; ${valid}`);
  });

  it('next is strictly after the given time, in the job time zone', () => {
    expect(iso(nextSlot({ cron: '0 * * * *', tz: 'UTC' }, t('2026-01-01T10:00:00Z')))).toBe('2026-01-01T11:00:00.000Z');
    expect(iso(nextSlot({ cron: '@daily', tz: 'America/New_York' }, t('2026-01-01T10:00:00Z')))).toBe('2026-01-02T05:00:00.000Z');
  });

  it('latest due slot follows next(), not prev(), around a DST fall-back', () => {
    // prev() from 03:00 CET would name 02:30 CET, which next() never yields.
    const at = latestSlot(berlin('30 2 * * *'), t('2026-10-24T12:00:00Z'), t('2026-10-25T02:00:00Z'));
    expect(iso(at)).toBe('2026-10-25T00:30:00.000Z');
    expect(latestSlot(berlin('30 2 * * *'), t('2026-10-25T00:30:00Z'), t('2026-10-25T02:00:00Z'))).toBeNull();
  });

  // How fast (it jumps instead of walking the week) is measured by bench/cron-catch-up.ts, not asserted here.
  it('the latest due slot of a per-second job after a week is the last second before now', () => {
    const at = latestSlot({ cron: '* * * * * *', tz: 'UTC' }, t('2026-01-01T00:00:00Z'), t('2026-01-08T00:00:00.500Z'));
    expect(iso(at)).toBe('2026-01-08T00:00:00.000Z');
  });
});

describe('cron plans', () => {
  const spec = { cron: '0 6 * * *', tz: 'UTC' };
  const plan = (after: string, now: string, graceMs: number, catchUp: 'once' | 'skip' = 'once') =>
    planWake({ spec, after: t(after), now: t(now), graceMs, catchUp });

  it('sleeps until the next slot when none is due', () => {
    expect(plan('2026-05-04T06:00:00Z', '2026-05-04T09:00:00Z', 60_000)).toEqual({ kind: 'sleep', until: t('2026-05-05T06:00:00Z') });
  });

  it('fires a slot on time within the grace, and a missed one as a catch-up or a skip', () => {
    expect(plan('2026-05-03T06:00:00Z', '2026-05-04T06:00:30Z', 60_000)).toEqual({
      kind: 'fire',
      slot: t('2026-05-04T06:00:00Z'),
      late: false,
    });
    expect(plan('2026-05-03T06:00:00Z', '2026-05-04T06:00:30Z', 0)).toEqual({ kind: 'fire', slot: t('2026-05-04T06:00:00Z'), late: true });
    expect(plan('2026-05-01T06:00:00Z', '2026-05-04T09:00:00Z', 0, 'skip')).toEqual({ kind: 'skip', slot: t('2026-05-04T06:00:00Z') });
  });

  it('folds several missed slots into the latest one: a backlog never runs', () => {
    expect(plan('2026-04-01T06:00:00Z', '2026-05-04T09:00:00Z', 0)).toEqual({ kind: 'fire', slot: t('2026-05-04T06:00:00Z'), late: true });
  });

  it('is done when the expression names no further time', () => {
    expect(planWake({ spec: { cron: '0 0 31 4 *' }, after: 0, now: 1, graceMs: 0, catchUp: 'once' })).toEqual({ kind: 'done' });
  });

  it('coalesces only with coalesce: true and a previous occurrence in flight', () => {
    expect(occurrenceAction(true, true)).toBe('coalesce');
    expect(occurrenceAction(true, false)).toBe('fire');
    expect(occurrenceAction(false, true)).toBe('fire');
    expect(bindingInFlight('cron:a', [{ binding: 'cron:b' }, {}, { binding: 'cron:a' }])).toBe(true);
    expect(bindingInFlight('cron:a', [{ binding: 'cron:ab' }])).toBe(false);
  });

  it('never sleeps longer than the timer limit, nor a negative time', () => {
    expect(sleepMs(10 ** 13, 0, Infinity)).toBe(MAX_TIMER_MS);
    expect(sleepMs(100, 0, 60_000)).toBe(100);
    expect(sleepMs(100, 500, 60_000)).toBe(0);
  });
});

describe('cron records', () => {
  const slot = t('2026-05-04T06:00:00Z');

  it('reads back what it wrote; anything unreadable is no record', () => {
    const record = withPending({ slot: null, since: '2026-05-01T00:00:00.000Z' }, slot, 'm1');
    expect(readCronRecord(JSON.parse(JSON.stringify(record)))).toEqual(record);
    expect(handledUpTo(record)).toBe(slot);
    expect(handledUpTo({ slot: null, since: '2026-05-01T00:00:00.000Z' })).toBe(t('2026-05-01T00:00:00Z'));
    for (const bad of [null, 'x', [], { slot: 'yesterday', since: '2026-05-01T00:00:00Z' }, { slot: null }]) {
      expect(readCronRecord(bad)).toBeNull();
    }
  });

  it('keeps a last outcome only when it reads as one: a known result, its times and fields of their types', () => {
    const since = '2026-05-01T00:00:00.000Z';
    const last = { slot: '2026-05-04T06:00:00.000Z', result: 'started', at: '2026-05-04T06:00:01.000Z', raider_id: 'bjorn-1' };
    expect(readCronRecord({ slot: last.slot, since, last })?.last).toEqual(last);
    for (const odd of [
      { ...last, result: 'exploded' },
      { ...last, at: 5 },
      { ...last, slot: 'yesterday' },
      { ...last, catch_up: 'yes' },
    ]) {
      const record = readCronRecord({ slot: last.slot, since, last: odd });
      expect(record).toEqual({ slot: last.slot, since });
    }
  });

  it('maps the hall reply to an outcome', () => {
    const at = slot + 5;
    expect(outcomeFromReply(slot, 'm1', { id: 'bjorn-1', pid: 1 }, at, false)).toMatchObject({ result: 'started', raider_id: 'bjorn-1' });
    expect(outcomeFromReply(slot, 'm1', { queued: 1, slot: 'bjorn' }, at, true)).toMatchObject({ result: 'queued', catch_up: true });
    expect(outcomeFromReply(slot, 'm1', { status: 'refused', reason: 'provider_not_stored', error: 'no alias' }, at, false)).toMatchObject({
      result: 'refused',
      error: 'no alias',
    });
    expect(outcomeFromReply(slot, 'm1', { error: 'the hall is stopping' }, at, false)).toMatchObject({
      result: 'error',
      error: 'the hall is stopping',
    });
  });

  it('follows the run of its mission to its end and ignores other runs', () => {
    const queued: CronOutcome = { slot: iso(slot)!, result: 'queued', at: iso(slot)!, mission_id: 'm1' };
    const started = noteRunEvent(queued, { type: 'raider.spawned', mission_id: 'm1', id: 'bjorn-7' });
    expect(started).toMatchObject({ result: 'started', raider_id: 'bjorn-7' });
    expect(noteRunEvent(started!, { type: 'raider.done', mission_id: 'm1', id: 'bjorn-7', status: 'failed', error: 'boom' })).toMatchObject(
      {
        status: 'failed',
        error: 'boom',
      },
    );
    expect(noteRunEvent(queued, { type: 'raider.done', mission_id: 'm2', id: 'bjorn-2', status: 'completed' })).toBeNull();
    expect(noteRunEvent(undefined, { type: 'raider.done', mission_id: 'm1', id: 'bjorn-1', status: 'completed' })).toBeNull();
  });

  it('a pending hand-over resolves to started, queued, or unknown (never fired again)', () => {
    const pending = withPending({ slot: null, since: '2026-05-01T00:00:00.000Z' }, slot, 'm1');
    expect(resolvePending(pending, { where: 'running', runId: 'bjorn-1' }, slot).last).toMatchObject({
      result: 'started',
      raider_id: 'bjorn-1',
    });
    expect(resolvePending(pending, { where: 'queued' }, slot).last).toMatchObject({ result: 'queued' });
    const lost = resolvePending(pending, null, slot);
    expect(lost).toMatchObject({ slot: iso(slot), last: { result: 'unknown' } });
    expect(lost.pending).toBeUndefined();
    expect(withOutcome(pending, lost.last!).pending).toBeUndefined();
  });
});

describe('cron configuration check', () => {
  it('names the file, the key, the job and what is wrong', () => {
    expect(
      cronConfigErrors(
        [
          { id: 'ok', cron: '@daily', mission: 'sweep' },
          { id: 'bad', cron: '0 25 * * *', mission: 'sweep' },
          { id: 'quiet', cron: '@daily', mission: ' ' },
        ],
        '/h/.raider-hall.yml',
      ),
    ).toEqual([
      '/h/.raider-hall.yml: cron[1].cron: job "bad": invalid cron expression "0 25 * * *": the hour field "25": 25 is outside 0-23; ' +
        'a valid schedule is 5 fields such as "0 9 * * 1-5" (09:00 on weekdays), 6 with seconds first, or an alias such as @daily',
      `/h/.raider-hall.yml: cron[2].mission: job "quiet" has no mission: write the text each run is given, e.g. mission: 'check the nightly build'`,
    ]);
  });
});
