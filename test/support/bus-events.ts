/** Whole protocol events for tests that publish on a bus or share with a cluster. */
import type { BusEventOf } from '../../src/protocol/events.js';

type RaiderDone = BusEventOf<'raider.done'>;

/** A `raider.done` of run `id` (slot `bjorn`, completed), with `fields` over it. */
export function raiderDone(id: string, fields: Partial<RaiderDone> = {}): RaiderDone {
  return {
    type: 'raider.done',
    id,
    slot: 'bjorn',
    pid: 1,
    exit_code: 0,
    signaled: 0,
    status: 'completed',
    mission_id: `m-${id}`,
    ...fields,
  };
}
