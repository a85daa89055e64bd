import { describe, expect, it } from 'vitest';
import { renderPs, renderStatus, styleFor } from '../../src/cli/hall/render.js';

const plain = styleFor({ isTTY: false } as NodeJS.WriteStream);

describe('raider hall status for a person', () => {
  it('shows runs, waiting missions, cron jobs, Telegram poll health and ACP', () => {
    const text = renderStatus(
      {
        running: 1,
        root: '/h',
        slots: ['1bjorn'],
        runs: [{ id: '1bjorn-1', slot: '1bjorn', pid: 42, age: 75, binding: 'slot:1bjorn' }],
        queues: { '1bjorn': 2, '2x': 0 },
        binding_queues: { 'telegram:ops:1': 1 },
        waiting: [
          { mission_id: 'm2-b', slot: '1bjorn', position: 2 },
          { mission_id: 'm1-a', slot: '1bjorn', position: 1 },
          { mission_id: 'm3-c', slot: '1bjorn', binding: 'telegram:ops:1', position: 1 },
        ],
        cron: {
          nightly: {
            name: '1bjorn',
            next: '2026-12-01T02:00:00.000Z',
            state: 'waiting',
            last: { result: 'fired', status: 'completed', at: '2026-11-30T02:00:01.000Z' },
          },
        },
        telegram: { ops: { state: 'retrying', failures: 3, last_error: { error: '401 Unauthorized' } } },
        acp: { host: '127.0.0.1', port: 38421, sessions: 2 },
      },
      plain,
    );
    expect(text).toBe(
      [
        'Hall /h',
        '1 running in 1bjorn',
        '',
        'ID       SLOT   PID AGE   BINDING',
        '1bjorn-1 1bjorn 42  1m15s slot:1bjorn',
        '',
        'QUEUE                  WAITING MISSION IDS (NEXT FIRST)',
        'slot 1bjorn            2       m1-a m2-b',
        'binding telegram:ops:1 1       m3-c',
        '',
        'CRON    RAIDER NEXT                 LAST',
        'nightly 1bjorn 2026-12-01 02:00:00Z completed at 2026-11-30 02:00:01',
        '',
        'TELEGRAM POLL                  LAST ERROR',
        'ops      retrying (3 failures) 401 Unauthorized',
        '',
        'ACP: 127.0.0.1:38421, 2 session(s)',
        '',
      ].join('\n'),
    );
  });

  it('status: warm bridges, ready or starting, and an entry whose bridges fail to start', () => {
    const text = renderStatus(
      {
        running: 0,
        root: '/h',
        warm_bridges: { claude: [{ pid: 41, ready: true, age: 75 }], codex: [], gemini: [{ pid: null, ready: false, age: 0.2 }] },
        warm_bridge_retries: { codex: { failed_starts: 2, retry_in: 1.6 }, gemini: { failed_starts: 1 } },
      },
      plain,
    );
    expect(text).toBe(
      [
        'Hall /h',
        '0 running',
        '',
        'WARM BRIDGE PID AGE   STATE',
        'claude      41  1m15s ready',
        'gemini      -   0s    starting',
        'codex       -   -     2 failed starts, next in 1s',
        'gemini      -   -     1 failed start',
        '',
      ].join('\n'),
    );
  });

  it('status: a long queue shows its first five mission ids and how many more wait', () => {
    const waiting = Array.from({ length: 7 }, (_, i) => ({ mission_id: `m${i + 1}`, slot: '1ivar', position: i + 1 }));
    expect(renderStatus({ running: 1, root: '/h', queues: { '1ivar': 7 }, waiting }, plain)).toBe(
      [
        'Hall /h',
        '1 running',
        '',
        'QUEUE      WAITING MISSION IDS (NEXT FIRST)',
        'slot 1ivar 7       m1 m2 m3 m4 m5 +2 more (raider hall queue)',
        '',
      ].join('\n'),
    );
  });

  it('ps: the reference columns on one hall; a last HALL column in a shared cluster', () => {
    const run = { slot: '1bjorn', pid: 4242, base_name: 'bjorn', id: '1bjorn-1796200000', mission: 'look at\nthe files' };
    expect(renderPs([run])).toBe(
      [
        'SLOT       PID      BASE_NAME ID                MISSION',
        '1bjorn     4242     bjorn     1bjorn-1796200000 look at the files',
        '',
      ].join('\n'),
    );
    expect(
      renderPs([
        { ...run, hall: 'hall-2' },
        { ...run, id: 'bjorn-1796200001', slot: 'bjorn', hall: 'hall-10' },
      ]),
    ).toBe(
      [
        'SLOT       PID      BASE_NAME ID                MISSION           HALL',
        '1bjorn     4242     bjorn     1bjorn-1796200000 look at the files hall-2',
        'bjorn      4242     bjorn     bjorn-1796200001  look at the files hall-10',
        '',
      ].join('\n'),
    );
  });
});
