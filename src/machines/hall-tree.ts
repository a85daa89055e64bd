/**
 * The hall's actor tree with the OS-facing actors bound: the daemon binds the
 * real ones, tests bind fakes. Everything else in the tree is pure.
 */
import type { AnyActorLogic } from 'xstate';
import { hallMachine } from './hall.machine.js';
import { runMachine } from './run.machine.js';
import { runHostLogic } from './run-host.js';
import { slotMachine } from './slot.machine.js';

export interface RunActors {
  prepareRun: AnyActorLogic;
  raiderProcess: AnyActorLogic;
  reapRun: AnyActorLogic;
}

export function hallWithRunActors(actors: RunActors): typeof hallMachine {
  const run = runMachine.provide({ actors: actors as never });
  const slot = slotMachine.provide({ actors: { runHost: runHostLogic(run) } });
  return hallMachine.provide({ actors: { slot } });
}
