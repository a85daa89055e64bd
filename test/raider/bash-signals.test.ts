// Signals while the `bash` tool runs, through the real raider: SIGINT ends
// the run cancelled and SIGTERM interrupted, and either way the command's
// process group — here one that ignores SIGTERM — is gone within 2 s,
// before the raider itself is.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupAlive } from '../support/processes.js';
import { cleanUp, ensureBuilt, makeProject, parseEvents, startRaider, waitForOutput, eventTypes, runTypes } from './helpers.js';

beforeAll(ensureBuilt, 120_000);
afterAll(cleanUp);

const STUBBORN = `
replies:
  - steps:
      - tool: bash
        arguments: { command: "trap '' TERM; echo $$ > pid; sleep 60 & sleep 60 & wait" }
      - message: "never"
`;

async function pidOf(root: string): Promise<number> {
  const file = join(root, 'pid');
  for (let i = 0; i < 400; i++) {
    if (existsSync(file) && readFileSync(file, 'utf8').endsWith('\n')) return Number(readFileSync(file, 'utf8'));
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the command never started');
}

for (const [signal, status] of [
  ['SIGINT', 'cancelled'],
  ['SIGTERM', 'interrupted'],
] as const) {
  describe(`${signal} during a bash tool`, () => {
    it(`ends the run ${status} and the command's process group within 2 s`, async () => {
      const root = makeProject(STUBBORN);
      const { child, done } = startRaider([
        '--stream-json',
        '-e',
        'scripted',
        '--permission-mode',
        'bypassPermissions',
        '-r',
        root,
        '--',
        'run it',
      ]);
      await waitForOutput(child, '"type":"tool.call"');
      const pgid = await pidOf(root);
      expect(groupAlive(pgid)).toBe(true);
      const sent = Date.now();
      child.kill(signal);
      let goneAfter = Infinity;
      while (Date.now() - sent < 5000) {
        if (!groupAlive(pgid)) {
          goneAfter = Date.now() - sent;
          break;
        }
        await new Promise((res) => setTimeout(res, 20));
      }
      const r = await done;
      expect(goneAfter).toBeLessThan(2000); // the 1 s grace for SIGTERM, then SIGKILL
      expect(groupAlive(pgid)).toBe(false);
      expect(r.signal).toBe(signal);
      expect(eventTypes(parseEvents(r.stdout))).toEqual(runTypes(status, 'tool.call', 'tool.result'));
      const events = parseEvents(r.stdout);
      expect(events[3]).toMatchObject({ name: 'bash', status: 'cancelled', ok: false });
      expect(events.at(-1)).toMatchObject(signal === 'SIGTERM' ? { status, signal: 'TERM' } : { status });
      const journal = readFileSync((events.at(-1)!.session as { path: string }).path, 'utf8');
      expect(journal).toContain(`"status":"${status}"`);
    });
  });
}
