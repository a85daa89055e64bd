import { expect } from 'vitest';
import { createActor } from 'xstate';
import { hallWithRunActors } from '../../src/machines/hall-tree.js';
import type { HallInput } from '../../src/machines/hall.machine.js';
import type { HallEmitted } from '../../src/machines/hall-effects.js';
import type { HallBusEvent } from '../../src/protocol/events.js';
import { ManualClock } from '../support/manual-clock.js';
import { createFakeWorld, fakeActors, fakeHallInput, settle } from '../support/fake-actors.js';

export function startHall(input: Partial<HallInput> = {}) {
  const clock = new ManualClock();
  const world = createFakeWorld(() => clock.now());
  const logic = hallWithRunActors(fakeActors(world));
  const hall = createActor(logic, {
    id: 'hall',
    clock,
    input: fakeHallInput(input),
  });
  const emitted: HallEmitted[] = [];
  hall.on('*', (e) => emitted.push(e as HallEmitted));
  const errors: unknown[] = [];
  hall.subscribe({ error: (e) => errors.push(e) });
  hall.start();
  let req = 0;
  let mission = 0;
  const api = {
    hall,
    clock,
    world,
    emitted,
    errors,
    boot() {
      hall.send({ type: 'hall.boot', at: clock.now() });
    },
    spawn(name: string, text: string, extra: { binding?: string } = {}): string {
      const reqId = `r${++req}`;
      hall.send({ type: 'cmd.spawn', reqId, missionId: `m${++mission}`, name, mission: text, at: clock.now(), ...extra });
      return reqId;
    },
    reply(reqId: string) {
      return emitted.find((e) => e.type === 'reply' && e.reqId === reqId) as Extract<HallEmitted, { type: 'reply' }> | undefined;
    },
    bus<T extends HallBusEvent['type']>(type: T): Array<Extract<HallBusEvent, { type: T }>> {
      return emitted.flatMap((e) => (e.type === 'bus' && isOfType(e.event, type) ? [e.event] : []));
    },
    allBus(): HallBusEvent[] {
      return emitted.flatMap((e) => (e.type === 'bus' ? [e.event] : []));
    },
    storeOps() {
      return emitted.flatMap((e) => (e.type === 'store' ? [e.op] : []));
    },
    /** Missions in the order their processes started. */
    started(): string[] {
      return world.prepared.filter((p) => world.processes.has(p.runId)).map((p) => p.entry.mission);
    },
    proc(mission: string) {
      const input = world.prepared.find((p) => p.entry.mission === mission);
      return input ? world.processes.get(input.runId) : undefined;
    },
    runIdOf(mission: string): string {
      const input = world.prepared.find((p) => p.entry.mission === mission);
      if (!input) throw new Error(`no run for ${mission}`);
      return input.runId;
    },
    async complete(mission: string, response = `done ${mission}`) {
      const p = api.proc(mission);
      if (!p) throw new Error(`no process for ${mission}`);
      p.exit({ code: 0 }, { version: 1, status: 'completed', response });
      await settle();
    },
    settle,
  };
  return api;
}

function isOfType<T extends HallBusEvent['type']>(event: HallBusEvent, type: T): event is Extract<HallBusEvent, { type: T }> {
  return event.type === type;
}

/** What a mission queue_front moved first shows: the reply to `reqId`, one raider.moved event and one stored move. */
export function expectMoved(
  h: ReturnType<typeof startHall>,
  reqId: string,
  moved: { mission_id: string; slot: string; position: number; from: number },
): void {
  expect(h.reply(reqId)?.body).toEqual({ moved: 1, ...moved });
  expect(h.bus('raider.moved')).toEqual([{ type: 'raider.moved', ...moved }]);
  expect(h.storeOps().filter((op) => op.op === 'front')).toEqual([{ op: 'front', missionId: moved.mission_id }]);
}
