/**
 * The raider process actor (src/actors/raider-process.actor.ts) asks the fork
 * server for its raider only once the run's record is written: a crash of the
 * hall then never runs a mission twice nor forgets a run (docs/storage.md).
 * The real actor under a small parent machine that keeps what it is told, a
 * real fork server and a real raider; the record's wait is the test's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createActor, setup } from 'xstate';
import { raiderProcessLogic } from '../../src/actors/raider-process.actor.js';
import type { RecordWritten } from '../../src/actors/record-written.js';
import { ForkServer } from '../../src/adapters/os/fork-server.js';
import type { ProcessInput } from '../../src/machines/run.machine.js';
import { eventually, tempRoot } from '../support/hall-client.js';

const servers: ForkServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** A record whose wait the test ends: `written` or `fails`. */
function heldRecord() {
  let written: () => void = () => {};
  let fails: (err: Error) => void = () => {};
  const wait = new Promise<void>((resolve, reject) => {
    written = resolve;
    fails = reject;
  });
  const recordWritten: RecordWritten = () => ({ done: wait, stop: () => {} });
  return { recordWritten, wait, written, fails };
}

/** The actor started for one run of `/bin/true`, under a parent that keeps the events it sends back. */
function startProcess(recordWritten: RecordWritten) {
  const server = new ForkServer(() => {});
  servers.push(server);
  const spawn = vi.spyOn(server, 'spawn');
  const root = tempRoot('raider-process-');
  const eventsPath = path.join(root, 'bjorn-1000.events.jsonl');
  fs.writeFileSync(eventsPath, '');
  const input: ProcessInput = {
    runId: 'bjorn-1000',
    eventsPath,
    logPath: path.join(root, 'bjorn.log'),
    spawn: { command: '/bin/true', args: [], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, cwd: root },
  };
  const told: string[] = [];
  const parent = setup({ actors: { process: raiderProcessLogic(server, recordWritten) } }).createMachine({
    invoke: { src: 'process', input },
    on: { '*': { actions: ({ event }) => told.push(event.type) } },
  });
  const actor = createActor(parent).start();
  return { actor, spawn, told };
}

/** Lets every callback queued on the settled `wait` run. */
async function afterSettled(wait: Promise<void>): Promise<void> {
  await wait.catch(() => undefined);
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('the raider process actor and the run record', () => {
  it('asks the fork server only once the record is written', async () => {
    const record = heldRecord();
    const { actor, spawn, told } = startProcess(record.recordWritten);
    await afterSettled(Promise.resolve());
    expect(spawn).not.toHaveBeenCalled();
    record.written();
    await eventually(() => expect(told).toEqual(['proc.spawned', 'proc.exited']));
    expect(spawn).toHaveBeenCalledTimes(1);
    actor.stop();
  });

  it('starts at once when the record is already written', async () => {
    const { actor, spawn, told } = startProcess(() => null);
    expect(spawn).toHaveBeenCalledTimes(1);
    await eventually(() => expect(told).toEqual(['proc.spawned', 'proc.exited']));
    actor.stop();
  });

  it('fails unstarted with the reason when the record cannot be written', async () => {
    const record = heldRecord();
    const { actor, spawn, told } = startProcess(record.recordWritten);
    record.fails(new Error('the cluster gave its mission to another hall'));
    await eventually(() => expect(told).toEqual(['proc.failed']));
    expect(spawn).not.toHaveBeenCalled();
    actor.stop();
  });

  it('starts nothing and tells nothing when the run is stopped before its record is written', async () => {
    for (const end of ['written', 'fails'] as const) {
      const record = heldRecord();
      const { actor, spawn, told } = startProcess(record.recordWritten);
      actor.stop();
      if (end === 'written') record.written();
      else record.fails(new Error('the disk is full'));
      await afterSettled(record.wait);
      expect(spawn).not.toHaveBeenCalled();
      expect(told).toEqual([]);
    }
  });
});
