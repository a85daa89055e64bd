/**
 * How long the cron catch-up takes to find the latest due slot of a
 * per-second job after a week away: it must jump, not walk 604,800 slots.
 * Target: median under 50 ms.
 *
 *   node --import tsx bench/cron-catch-up.ts [--quick] [--runs N]
 */
import { latestSlot } from '../src/domain/cron-schedule.js';
import { argNumber, count, fmt, machine, nowMs, runMain, stats, STATS_HEADERS, statsRow, summary, table } from './lib.js';

const TARGET_MS = 50;

runMain(async () => {
  const runs = argNumber('runs') ?? count(50, 10);
  const from = Date.parse('2026-01-01T00:00:00Z');
  const to = Date.parse('2026-01-08T00:00:00.500Z');
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = nowMs();
    const at = latestSlot({ cron: '* * * * * *', tz: 'UTC' }, from, to);
    times.push(nowMs() - t0);
    if (at !== Date.parse('2026-01-08T00:00:00Z')) throw new Error(`wrong slot: ${String(at)}`);
  }
  const s = stats(times);
  process.stdout.write(`${machine()}\n${table([...STATS_HEADERS], [statsRow('latest slot, 1 s job, a week late (ms)', s)])}\n`);
  summary([
    {
      bench: 'cron-catch-up',
      metric: `latest due slot after a week, median (ms), n=${runs}`,
      value: fmt(s.median, 1),
      target: `< ${TARGET_MS}`,
      met: s.median < TARGET_MS,
    },
  ]);
});
