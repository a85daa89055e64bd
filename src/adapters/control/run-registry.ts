/**
 * The read model behind `ps`, `status` and `attach`: the live runs, fed by
 * what the hall emits. Ended runs leave it, so the actor tree holds only live
 * runs and queries never touch actors. The runs are a Map changed in place:
 * with a thousand runs going, copying them at every start and end would cost
 * more than the runs themselves.
 */
import { createStore } from '@xstate/store';
import type { LiveRun } from '../../machines/hall-effects.js';

export function createRunRegistry() {
  return createStore({
    context: { runs: new Map<string, LiveRun>() },
    on: {
      runStarted: (context, event: { run: LiveRun }) => {
        context.runs.set(event.run.id, event.run);
        return context;
      },
      runEnded: (context, event: { runId: string }) => {
        context.runs.delete(event.runId);
        return context;
      },
    },
  });
}

export type RunRegistry = ReturnType<typeof createRunRegistry>;

export function liveRuns(registry: RunRegistry): LiveRun[] {
  return [...registry.getSnapshot().context.runs.values()];
}

export function liveRun(registry: RunRegistry, id: unknown): LiveRun | undefined {
  return typeof id === 'string' ? registry.getSnapshot().context.runs.get(id) : undefined;
}
