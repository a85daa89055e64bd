/**
 * What a shared cluster tells the hall (docs/cluster.md): a mission this
 * hall claimed from the cluster's queue, and runs of this hall that another
 * hall reported when it took this one for lost.
 */
import { effectiveBinding, slotOf } from '../domain/names.js';
import { ownEntry as own } from '../domain/own-entry.js';
import { type EventOf, hallAction } from './hall-context.js';
import { routeMission } from './hall-routing.js';
import { runActorId } from './run-host.js';

export const clusterActions = {
  acceptClaimed: hallAction(({ context, enqueue }, claimed: EventOf<'cluster.claimed'>) => {
    const binding = effectiveBinding(slotOf(claimed.entry.name).slot, claimed.entry.binding);
    // The cluster's sessions table is the truth: another hall may have bound this binding since, or reset it.
    if (binding !== undefined && claimed.session !== undefined && own(context.sessions, binding) !== claimed.session) {
      enqueue.assign({ sessions: { ...context.sessions, [binding]: claimed.session } });
    } else if (binding !== undefined && claimed.session === undefined && own(context.sessions, binding) !== undefined) {
      const { [binding]: _, ...sessions } = context.sessions;
      enqueue.assign({ sessions });
    }
    enqueue.assign({
      tickets: context.tickets + 1,
      reservedRunIds: { ...context.reservedRunIds, [claimed.entry.id]: claimed.runId },
    });
    // Its run record goes through the store like any run's (run.prepared), under the reserved id.
    routeMission(context, enqueue, { entry: claimed.entry, at: claimed.at, queued: true });
  }),

  stopReplacedRuns: hallAction(({ context, enqueue, system }, replaced: EventOf<'cluster.replaced'>) => {
    const silenced = { ...context.silenced };
    for (const runId of replaced.runIds) {
      const ref = system.get(runActorId(runId));
      if (!ref) continue;
      silenced[runId] = true;
      enqueue.sendTo(ref, { type: 'run.kill' });
    }
    enqueue.assign({ silenced });
  }),
};
