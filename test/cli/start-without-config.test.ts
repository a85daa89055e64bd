/**
 * `raider hall start` in a directory without `.raider-hall.yml` runs a hall
 * with no raiders configured, and says so, with the command that configures
 * one (issue 14, item 19): on the terminal of `start --daemon` and in the
 * hall's log. A spawn there runs with the raider's defaults and says that too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { alive, hall, hallRoot, removeRoots, spawned } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

describe('start without .raider-hall.yml', () => {
  it('runs with no raiders, says so and how to configure one; a spawn says it runs with the defaults', async () => {
    const root = hallRoot();
    const started = await hall(['start', '--daemon'], root);
    const pid = Number(/^Hall started with PID (\d+)\n$/.exec(started.stdout)?.[1] ?? 0);
    try {
      expect(started.code, started.stderr).toBe(0);
      const said = `no .raider-hall.yml in ${root}: the hall runs with no raiders configured`;
      expect(started.stderr).toContain(said);
      expect(started.stderr).toContain('raider hall init --name NAME');
      expect(fs.readFileSync(path.join(root, '.raider-hall', 'hall.log'), 'utf8')).toContain(said);
      // Nothing was written in the directory's name: no config appears by itself.
      expect(fs.existsSync(path.join(root, '.raider-hall.yml'))).toBe(false);

      const status = await hall(['status', '--json'], root);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ root, running: 0 });

      const spawn = await hall(['spawn', 'bjorn', 'answer', 'hi'], root);
      expect(spawn.code).toBe(0);
      expect(spawned(spawn.stdout).slot).toBe('bjorn');
      expect(spawn.stderr).toBe("Note: bjorn has no entry in .raider-hall.yml; it runs with the raider's defaults.\n");
      expect((await hall(['stop'], root)).code).toBe(0);
    } finally {
      if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
