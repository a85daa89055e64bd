// The cluster's chaos run at a size for `npm test` (test/support/cluster-chaos.ts
// says what it does; `npm run chaos:cluster` runs it with 1,000 missions):
// three hall processes on one embedded PostgreSQL, a random hall killed with
// kill -9 every couple of seconds and started again, the database restarted
// once. Every accepted mission ran once or was reported lost once, none ran
// twice, a numbered slot's and a binding's runs never overlapped and kept
// their FIFO order, whichever hall ran them.
import { beforeAll, describe, expect, it } from 'vitest';
import { type ChaosReport, runChaos } from '../support/cluster-chaos.js';
import { usePostgresServer } from '../support/postgres-server.js';

const server = usePostgresServer();
// `npm test` runs a small chaos; `npm run chaos:cluster` sets CHAOS_MISSIONS=1000 (and CHAOS_LOG=1).
const MISSIONS = Number(process.env.CHAOS_MISSIONS ?? 60);
// The draining of a thousand missions through serial queues, with halls dying, takes minutes.
const BUDGET_MS = Math.max(120_000, MISSIONS * 1500);

describe('a shared cluster under chaos', () => {
  let report: ChaosReport;
  beforeAll(async () => {
    report = await runChaos({
      server,
      missions: MISSIONS,
      submitPerSecond: 12,
      killEveryMs: 2_000,
      restartAfterMs: [500, 3_500],
      databaseDownMs: 800,
      leaseSeconds: 2,
      maxRunning: 4,
      raiderMaxMs: 40,
      settleTimeoutMs: BUDGET_MS - 30_000,
      ...(process.env.CHAOS_LOG ? { log: (line: string) => process.stderr.write(`${line}\n`) } : {}),
    });
    if (process.env.CHAOS_LOG) process.stderr.write(`${JSON.stringify(report, null, 1)}\n`);
  }, BUDGET_MS);

  it(`loses, repeats and reorders nothing: ${MISSIONS} missions, halls killed with kill -9 and restarted, the database restarted once`, () => {
    // Joined: a failure then shows each violation, not `[ Array(1) ]`.
    expect(report.violations.join('\n')).toBe('');
    expect(report.accepted).toBeGreaterThanOrEqual(MISSIONS);
    expect(report.kills).toBeGreaterThanOrEqual(2);
    expect(report.databaseRestarts).toBe(1);
    // The chaos did something: work ran on every hall.
    expect(Object.keys(report.runsPerHall).sort()).toEqual(['chaos-1', 'chaos-2', 'chaos-3']);
  });

  it("continues a binding's session on every hall: each numbered slot's and binding's runs had one session", () => {
    expect(report.sessionBreaks.join('\n')).toBe('');
  });
});
