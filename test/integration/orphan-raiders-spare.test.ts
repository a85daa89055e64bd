/**
 * The cluster's sweep of a starting hall (orphanRaiders) ends the raiders of
 * this root whose runs the ledger does not name. A run handed to a warm
 * bridge is named by its spare id too (docs/agents.md, "Warm bridges"): the
 * bridge, whose RAIDER_HALL_RUN_ID is `spare-ID`, is not taken for an orphan.
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { knownRaiderIds, orphanRaiders } from '../../src/actors/run-recovery.js';
import { removeRoots, tempRoot } from '../cli/cli-helpers.js';
import { eventually } from '../support/hall-client.js';

afterAll(() => removeRoots());

describe('orphanRaiders and a run handed to a warm bridge', () => {
  it('counts the bridge of a recorded run as known, and an unrecorded one as an orphan', async () => {
    const root = tempRoot('orphan-spare-');
    const bridge = spawn('sleep', ['60'], {
      env: { ...process.env, RAIDER_HALL_ROOT: root, RAIDER_HALL_RUN_ID: 'spare-abc' },
      stdio: 'ignore',
    });
    try {
      const pid = bridge.pid ?? 0;
      await eventually(() => expect(orphanRaiders(root, new Set())).toEqual([{ pid, runId: 'spare-abc' }]));
      expect(orphanRaiders(root, knownRaiderIds([{ id: 'warm-1', spare: 'abc' }]))).toEqual([]);
      expect(orphanRaiders(root, knownRaiderIds([{ id: 'warm-1' }]))).toEqual([{ pid, runId: 'spare-abc' }]);
    } finally {
      bridge.kill('SIGKILL');
    }
  });
});
