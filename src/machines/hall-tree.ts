/**
 * The hall's actor tree with the OS-facing actors bound: the daemon binds the
 * real ones, tests bind fakes. Everything else in the tree is pure.
 */
import type { CallbackActorLogic, PromiseActorLogic } from 'xstate';
import type { RunOutcome } from '../domain/outcome.js';
import { hallMachine } from './hall.machine.js';
import {
  type PrepareOutput,
  type ProcessCommand,
  type ProcessInput,
  type ReapInput,
  type RunInput,
  runMachine,
  type SettleInput,
} from './run.machine.js';
import { runHostLogic } from './run-host.js';
import { slotMachine } from './slot.machine.js';

export interface RunActors {
  prepareRun: PromiseActorLogic<PrepareOutput, RunInput>;
  /** Starts the raider once the store holds the run's record (the hall applies it when the run reports it) and has written it. */
  raiderProcess: CallbackActorLogic<ProcessCommand, ProcessInput>;
  reapRun: PromiseActorLogic<RunOutcome, ReapInput>;
  settleWorktree: PromiseActorLogic<RunOutcome, SettleInput>;
}

export function hallWithRunActors(actors: RunActors): typeof hallMachine {
  const run = runMachine.provide({ actors });
  const slot = slotMachine.provide({ actors: { runHost: runHostLogic(run) } });
  return hallMachine.provide({ actors: { slot } });
}
