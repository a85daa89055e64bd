/**
 * What each effect the hall actor emits does: `store` operations go to the
 * durable state, `bus` events to the event bus (and the foreground view),
 * `registry.*` to the read model behind ps, status and attach, and to the
 * events-file retention. Replies are the gateway's (hall-gateway.ts), and
 * `hall.stopped` the shutdown's (hall-shutdown.ts).
 */
import type { Actor } from 'xstate';
import type { Envelope, EventBus } from '../ports/bus.js';
import type { RunRegistry } from '../adapters/control/run-registry.js';
import type { EventsRetention } from '../adapters/storage/events-retention.js';
import type { HallStateStore } from '../ports/state-store.js';
import type { hallMachine } from '../machines/hall.machine.js';
import type { PermissionChannels } from './permission-channels.js';
import type { WarmBridges } from './warm-bridges.js';

export interface EffectTargets {
  store: HallStateStore;
  bus: EventBus;
  registry: RunRegistry;
  retention: EventsRetention;
  permissionChannels: PermissionChannels;
  /** Told of each run's end once it is published: a warm bridge's replacement starts then. */
  warmBridges?: Pick<WarmBridges, 'runEnded'> | undefined;
  /** Every event-bus event, for the foreground view. */
  onEvent?: ((event: Envelope) => void) | undefined;
}

export function routeHallEffects(actor: Actor<typeof hallMachine>, targets: EffectTargets): void {
  const { store, bus, registry, retention, permissionChannels, warmBridges, onEvent } = targets;
  actor.on('store', (e) => store.apply(e.op));
  actor.on('bus', (e) => {
    const envelope = bus.publish(e.event);
    onEvent?.(envelope);
    if (e.event.type === 'raider.done') {
      permissionChannels.close(e.event.id);
      warmBridges?.runEnded(e.event.id);
    }
  });
  actor.on('registry.runStarted', (e) => {
    // send, not trigger: a trigger copies its payload into an event with a spread (V8's slow path on Node 20).
    registry.send({ type: 'runStarted', run: e.run });
    retention.started(e.run.id);
  });
  actor.on('registry.runEnded', (e) => {
    const run = registry.getSnapshot().context.runs.get(e.runId);
    registry.send({ type: 'runEnded', runId: e.runId });
    // Nobody waits for the old files to go.
    if (run) void retention.ended(run.slot, (id) => registry.getSnapshot().context.runs.has(id));
  });
}
