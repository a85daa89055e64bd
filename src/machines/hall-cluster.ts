/**
 * What a shared cluster tells the hall (docs/cluster.md): a mission this
 * hall claimed from the cluster's queue, and runs of this hall that another
 * hall reported when it took this one for lost.
 */
import { effectiveBinding, slotOf } from '../domain/names.js';
import { ownEntry as own } from '../domain/own-entry.js';
import { type EventOf, hallAction, type HallContext } from './hall-context.js';
import { routeMission } from './hall-routing.js';
import { runActorId } from './run-host.js';

export const clusterActions = {
  acceptClaimed: hallAction(({ context, enqueue }, claimed: EventOf<'cluster.claimed'>) => {
    const binding = effectiveBinding(slotOf(claimed.entry.name).slot, claimed.entry.binding);
    if (binding !== undefined) takeClusterSession(context, enqueue, binding, claimed.session);
    enqueue.assign({
      tickets: context.tickets + 1,
      reservedRunIds: { ...context.reservedRunIds, [claimed.entry.id]: claimed.runId },
    });
    // Its run record goes through the store like any run's (run.prepared), under the reserved id.
    routeMission(context, enqueue, { entry: claimed.entry, at: claimed.at, queued: true });
  }),

  learnClusterSession: hallAction(({ context, enqueue }, known: EventOf<'cluster.session'>) => {
    takeClusterSession(context, enqueue, known.binding, known.session);
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

/**
 * The cluster's sessions table is the truth: another hall may have bound the binding since, or reset it.
 * Only this hall's view changes: the table already says it.
 */
function takeClusterSession(
  context: HallContext,
  enqueue: { assign(values: Partial<HallContext>): void },
  binding: string,
  session: string | undefined,
): void {
  const mine = own(context.sessions, binding);
  if (session !== undefined && mine !== session) enqueue.assign({ sessions: { ...context.sessions, [binding]: session } });
  else if (session === undefined && mine !== undefined) {
    const { [binding]: _, ...sessions } = context.sessions;
    enqueue.assign({ sessions });
  }
}
