// A run of a shared cluster whose record the cluster refused: the hall had
// been taken for lost, and its mission's claim went back to the cluster's
// queue. The run ends unstarted and silently, and its mission is left where
// the cluster put it (this hall may already hold a new claim of it).
import { describe, expect, it } from 'vitest';
import { startHall } from './hall-harness.js';

describe('a run replaced before its record was written (hall machine, simulated time)', () => {
  it('ends without a raider.done and without removing its mission, which waits in the cluster again', async () => {
    const h = startHall();
    h.boot();
    h.world.refuseRecord.add('a');
    h.spawn('ulf', 'a', { binding: 'telegram:ops:1' });
    await h.settle();
    const runId = h.runIdOf('a');
    // The state store said so when the batch with the run's record committed, before the record step heard of it.
    h.hall.send({ type: 'cluster.replaced', runIds: [runId] });
    h.world.releaseRecords();
    await h.settle();

    expect(h.started()).toEqual([]);
    expect(h.bus('raider.done')).toEqual([]);
    expect(h.storeOps().filter((op) => op.op === 'remove')).toEqual([]);
    expect(h.storeOps().filter((op) => op.op === 'end')).toEqual([{ op: 'end', runId }]);
    // Nothing of it is left in the hall: the binding takes its next mission.
    h.spawn('ulf', 'b', { binding: 'telegram:ops:1' });
    await h.settle();
    expect(h.started()).toEqual(['b']);
    expect(h.errors).toEqual([]);
  });

  it('a run whose record failed otherwise is reported and its mission removed, as before', async () => {
    const h = startHall();
    h.boot();
    h.world.refuseRecord.add('a');
    h.spawn('ulf', 'a');
    await h.settle();
    h.world.releaseRecords();
    await h.settle();
    expect(h.bus('raider.done')).toEqual([expect.objectContaining({ status: 'failed', mission_id: 'm1' })]);
    expect(h.storeOps().filter((op) => op.op === 'remove')).toEqual([{ op: 'remove', missionId: 'm1' }]);
  });
});
