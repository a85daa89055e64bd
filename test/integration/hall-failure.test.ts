/**
 * A bug in the hall actor (here: an event it cannot read, sent past the
 * gateway) must not leave raiders behind, and is reported through the
 * hall's `stopped` promise with exit code 70, not by exiting the process
 * from inside the supervisor: the CLI's start command decides to exit.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processAlive } from '../../src/adapters/os/process-alive.js';
import { runStarted, startTestHall } from '../support/test-hall.js';

describe('a hall whose actor fails', () => {
  it('kills its raiders, closes what it holds, and resolves stopped with 70', async () => {
    const hall = await startTestHall({ config: 'raiders: { bjorn: {} }\n' });
    const reply = await hall.request({ cmd: 'spawn', name: 'bjorn', mission: `until ${path.join(hall.root, 'never')}` });
    await runStarted(reply.events_path);
    // A malformed internal event: an action of the hall machine throws on it.
    hall.hall.actor.send({ type: 'binding.dropped' } as never);
    expect(await hall.hall.stopped).toBe(70);
    expect(hall.logs.some((line) => line.startsWith('hall actor failed: '))).toBe(true);
    expect(processAlive(reply.pid as number)).toBe(false);
    expect(fs.existsSync(hall.socket)).toBe(false);
    expect(fs.existsSync(path.join(hall.root, '.raider-hall.pid'))).toBe(false);
    // The lock is free: the next hall on the same root starts.
    const next = await startTestHall({ root: hall.root });
    await next.stop();
  });
});
