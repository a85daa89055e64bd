import { describe, expect, it } from 'vitest';
import { startHall } from './hall-harness.js';

async function runningHall(graceMs: number) {
  const h = startHall({ graceMs });
  h.boot();
  const reqId = h.spawn('bjorn', 'stubborn');
  await h.settle();
  const id = h.runIdOf('stubborn');
  expect(h.reply(reqId)?.body).toMatchObject({ id, pid: expect.any(Number), slot: 'bjorn' });
  return { h, id };
}

/** What raider.done says of a cancelled run whose raider died by the hall's signal `signalNumber` with no result. */
function cancelledWithoutResult(id: string, signalNumber: number) {
  return {
    id,
    status: 'cancelled',
    signaled: 1,
    exit_code: 0,
    error: `raider ${id} ended without a result (killed by signal ${signalNumber})`,
    cancel_requested: true,
  };
}

function runState(h: ReturnType<typeof startHall>, id: string): unknown {
  return h.hall.system.get(`run:${id}`)?.getSnapshot().value;
}

describe('cancel escalation (run machine, simulated time)', () => {
  it('with cancel_grace 5 sends SIGINT, SIGTERM after 5 s and SIGKILL after 10 s', async () => {
    const { h, id } = await runningHall(5000);
    h.hall.send({ type: 'cmd.cancel', reqId: 'c', id });
    expect(h.reply('c')?.body).toEqual({ cancelled: 1, id });
    expect(runState(h, id)).toEqual({ alive: 'cancelling' });
    h.clock.advance(4999);
    expect(h.proc('stubborn')!.signals).toEqual(['SIGINT']);
    h.clock.advance(1);
    expect(runState(h, id)).toEqual({ alive: 'terminating' });
    h.clock.advance(5000);
    expect(runState(h, id)).toEqual({ alive: 'killing' });
    expect(h.proc('stubborn')!.signals).toEqual(['SIGINT', 'SIGTERM', 'SIGKILL']);
    expect(h.proc('stubborn')!.signalTimes).toEqual([0, 5000, 10000]);
    h.proc('stubborn')!.exit({ signal: 'SIGKILL' });
    await h.settle();
    expect(h.bus('raider.done')).toEqual([
      expect.objectContaining({
        id,
        status: 'failed',
        signaled: 1,
        exit_code: 0,
        error: `raider ${id} ended without a result (killed by signal 9)`,
        cancel_requested: true,
        hall_stop: 'cancelled by the hall, escalated to SIGKILL (SIGINT, SIGTERM, SIGKILL)',
      }),
    ]);
    expect(h.proc('stubborn')!.stopped).toBe(true);
    expect(h.errors).toEqual([]);
  });

  it('with cancel_grace 0.5 escalates after 0.5 s and 1 s, all in one advance', async () => {
    const { h, id } = await runningHall(500);
    h.hall.send({ type: 'cmd.cancel', reqId: 'c', id });
    h.clock.advance(60_000);
    expect(h.proc('stubborn')!.signalTimes).toEqual([0, 500, 1000]);
    expect(h.proc('stubborn')!.signals).toEqual(['SIGINT', 'SIGTERM', 'SIGKILL']);
  });

  it('with cancel_grace 0 never escalates', async () => {
    const { h, id } = await runningHall(0);
    h.hall.send({ type: 'cmd.cancel', reqId: 'c', id });
    h.clock.advance(3_600_000);
    expect(h.proc('stubborn')!.signals).toEqual(['SIGINT']);
    expect(runState(h, id)).toEqual({ alive: 'cancelling' });
    expect(h.clock.pending()).toBe(0);
  });

  it('an obedient raider gets only SIGINT and its cancelled result is reported', async () => {
    const { h, id } = await runningHall(5000);
    h.hall.send({ type: 'cmd.cancel', reqId: 'c', id });
    h.clock.advance(100);
    h.proc('stubborn')!.exit({ signal: 'SIGINT' }, { version: 1, status: 'cancelled' });
    await h.settle();
    h.clock.advance(60_000);
    expect(h.proc('stubborn')!.signals).toEqual(['SIGINT']);
    expect(h.bus('raider.done')[0]).toMatchObject({ id, status: 'cancelled', signaled: 1 });
    expect(h.hall.system.get(`run:${id}`)).toBeUndefined();
  });

  it('a cancel before the raider started: SIGINT once it has, and a raider that dies by it with no result ends cancelled', async () => {
    const h = startHall({ graceMs: 5000 });
    h.boot();
    h.spawn('bjorn', 'early');
    const id = h.runIdOf('early');
    expect(runState(h, id)).toBe('queued');
    h.hall.send({ type: 'cmd.cancel', reqId: 'c', id });
    expect(h.reply('c')?.body).toEqual({ cancelled: 1, id });
    await h.settle();
    expect(h.proc('early')!.signals).toEqual(['SIGINT']);
    h.proc('early')!.exit({ signal: 'SIGINT' });
    await h.settle();
    expect(h.bus('raider.done')).toEqual([expect.objectContaining(cancelledWithoutResult(id, 2))]);
    expect(h.bus('raider.done')[0]).not.toHaveProperty('hall_stop');
  });

  it.each([
    ['cancelled, it died by a signal the hall did not send', 'cancel', { signal: 'SIGKILL' }, 'killed by signal 9'],
    ['cancelled, it exited with no result', 'cancel', { code: 130 }, 'exit code 130'],
    ['killed, it died by the SIGTERM', 'kill', { signal: 'SIGTERM' }, 'killed by signal 15'],
  ])('a raider with no result ends the run failed when, %s', async (_, how, exit, why) => {
    const { h, id } = await runningHall(5000);
    h.hall.send({ type: how === 'cancel' ? 'cmd.cancel' : 'cmd.kill', reqId: 'c', id });
    h.proc('stubborn')!.exit(exit);
    await h.settle();
    expect(h.bus('raider.done')).toEqual([
      expect.objectContaining({ id, status: 'failed', error: `raider ${id} ended without a result (${why})` }),
    ]);
  });

  it('kill sends SIGTERM, escalates to SIGKILL after the grace, and a second kill is immediate', async () => {
    const { h, id } = await runningHall(5000);
    h.hall.send({ type: 'cmd.kill', reqId: 'k1', id });
    expect(h.reply('k1')?.body).toEqual({ killed: 1, id });
    expect(h.proc('stubborn')!.signals).toEqual(['SIGTERM']);
    h.clock.advance(1000);
    h.hall.send({ type: 'cmd.kill', reqId: 'k2', id });
    expect(h.proc('stubborn')!.signals).toEqual(['SIGTERM', 'SIGKILL']);
    expect(h.proc('stubborn')!.signalTimes).toEqual([0, 1000]);
  });

  it.each([
    ['running', [] as string[]],
    ['cancelling', ['cancel']],
    ['terminating', ['cancel', 5000]],
    ['killing', ['cancel', 5000, 5000]],
  ])('a raider that exits while %s ends the run with one raider.done', async (state, steps) => {
    const { h, id } = await runningHall(5000);
    for (const step of steps) {
      if (step === 'cancel') h.hall.send({ type: 'cmd.cancel', reqId: 'c', id });
      else h.clock.advance(step as number);
    }
    expect(runState(h, id)).toEqual({ alive: state });
    h.proc('stubborn')!.exit({ code: 0 }, { version: 1, status: 'completed', response: 'fine' });
    await h.settle();
    h.clock.advance(60_000);
    expect(h.bus('raider.done')).toHaveLength(1);
    expect(h.bus('raider.done')[0]).toMatchObject({ id, status: 'completed', response: 'fine' });
    expect(h.clock.pending()).toBe(0);
  });

  // A missing id never gets here: the protocol's schemas refuse it (test/protocol).
  it('unknown ids are refused with a clear error', async () => {
    const { h } = await runningHall(5000);
    h.hall.send({ type: 'cmd.cancel', reqId: 'x', id: 'nope-1' });
    h.hall.send({ type: 'cmd.kill', reqId: 'y', id: 'nope-2' });
    expect(h.reply('x')?.body).toEqual({ error: 'raider not found', code: 'run_not_found' });
    expect(h.reply('y')?.body).toEqual({ error: 'raider not found', code: 'run_not_found' });
  });
});

describe('shutdown and cancel_grace', () => {
  it('a run stopped by the hall gets SIGTERM and no cancel_grace escalation: the shutdown timer decides', async () => {
    const { h, id } = await runningHall(300);
    h.hall.send({ type: 'hall.stop' });
    h.clock.advance(4999);
    expect(h.proc('stubborn')!.signals).toEqual(['SIGTERM']);
    expect(runState(h, id)).toEqual({ alive: 'terminating' });
    h.clock.advance(1);
    expect(h.proc('stubborn')!.signals).toEqual(['SIGTERM', 'SIGKILL']);
    expect(h.proc('stubborn')!.signalTimes).toEqual([0, 5000]);
  });

  it('a cancel under way when the hall stops is finished by the shutdown timer too', async () => {
    const { h, id } = await runningHall(300);
    h.hall.send({ type: 'cmd.cancel', reqId: 'c', id });
    h.clock.advance(100);
    h.hall.send({ type: 'hall.stop' });
    h.clock.advance(4000);
    expect(h.proc('stubborn')!.signals).toEqual(['SIGINT', 'SIGTERM']);
    h.clock.advance(1000);
    expect(h.proc('stubborn')!.signals).toEqual(['SIGINT', 'SIGTERM', 'SIGKILL']);
  });
});
