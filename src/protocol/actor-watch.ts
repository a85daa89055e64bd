/**
 * One live actor as the dashboard's statechart page follows it
 * (`GET /api/actors/stream?id=ID`, Server-Sent Events, docs/dashboard.md
 * "Statecharts"): each message's `data:` is one of these objects. First
 * `actor.snapshot` (its state and the events it received and sent lately),
 * then `actor.state` at each change of state and `actor.event` at each event,
 * in the order the hall saw them; `actor.stopped` when it is gone.
 *
 * With `&batch=1` the same messages, in the same order, come several to an
 * SSE message: `event: batch`, its `data:` an ActorWatchBatch. A busy actor
 * (a slot under a burst of missions, a few events each) is then a few
 * messages a second for the reader, not one per event.
 */
import { z } from 'zod';

/** One event an actor received (from `peer`, when another actor sent it) or sent (to `peer`). */
export const ActorEventRecord = z.object({
  dir: z.enum(['received', 'sent']),
  /** The event's type (`run.cancel`, `xstate.after.cancelGrace.run.alive.cancelling`); its payload is not carried. */
  event: z.string(),
  /** The other actor's id, when the event came from or went to one. */
  peer: z.string().optional(),
  /** Epoch ms. */
  time: z.number(),
});
export type ActorEventRecord = z.infer<typeof ActorEventRecord>;

/** Where an actor is: its machine, its state and every state node it is in. */
export const ActorStateFields = z.object({
  id: z.string(),
  /** The machine's id (`run`, `slot`, `bindingQueue`, `hall`, `acpSession`, `question`, `cronJob`); names its chart. */
  kind: z.string(),
  /** The state value as text (`alive.cancelling`; parallel regions joined with `, `). */
  state: z.string(),
  /** Every state node the actor is in, as dotted paths, parents first (`alive`, `alive.cancelling`). */
  states: z.array(z.string()),
  /** active, done, error or stopped. */
  status: z.string(),
  /** Epoch ms the actor entered its state, as far as the hall saw. */
  since: z.number(),
});
export type ActorStateFields = z.infer<typeof ActorStateFields>;

export const ActorSnapshotMessage = ActorStateFields.extend({
  type: z.literal('actor.snapshot'),
  /** The actor's recent events, oldest first (at most the last 50). */
  events: z.array(ActorEventRecord),
});
export const ActorStateMessage = ActorStateFields.extend({ type: z.literal('actor.state') });
export const ActorEventMessage = ActorEventRecord.extend({ type: z.literal('actor.event'), id: z.string() });
export const ActorStoppedMessage = z.object({ type: z.literal('actor.stopped'), id: z.string() });

export const ActorWatchMessage = z.discriminatedUnion('type', [
  ActorSnapshotMessage,
  ActorStateMessage,
  ActorEventMessage,
  ActorStoppedMessage,
]);
export type ActorWatchMessage = z.infer<typeof ActorWatchMessage>;

/** One SSE message of a batched stream (`event: batch`): the messages since the last, oldest first, never empty. */
export const ActorWatchBatch = z.array(ActorWatchMessage).min(1);
export type ActorWatchBatch = z.infer<typeof ActorWatchBatch>;
