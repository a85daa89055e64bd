/**
 * The read model behind `ps`, `status` and `attach`: the live runs, fed by
 * what the hall emits. Ended runs leave it, so the actor tree holds only live
 * runs and queries never touch actors.
 */
import { createStore } from '@xstate/store';
import type { LiveRun } from '../../machines/hall-effects.js';

export function createRunRegistry() {
  return createStore({
    context: { runs: {} as Record<string, LiveRun> },
    on: {
      runStarted: (context, event: { run: LiveRun }) => ({ runs: { ...context.runs, [event.run.id]: event.run } }),
      runEnded: (context, event: { runId: string }) => {
        if (!Object.hasOwn(context.runs, event.runId)) return context;
        const { [event.runId]: _ended, ...runs } = context.runs;
        return { runs };
      },
    },
  });
}

export type RunRegistry = ReturnType<typeof createRunRegistry>;

export function liveRuns(registry: RunRegistry): LiveRun[] {
  return Object.values(registry.getSnapshot().context.runs);
}
