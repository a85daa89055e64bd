/**
 * The I/O behind a cron job machine: the wall clock, a look at what the hall
 * still runs or keeps waiting, handing an occurrence to the hall, and
 * recording a slot handled without a run. Each answers the machine with an
 * event; failures are logged and answered `failed` (the slot still counts as
 * handled, so it is never fired twice).
 */
import { fromCallback, type EventObject } from 'xstate';
import type { HallServices } from '../../ports/hall-services.js';
import type { CronJobConfig } from '../../ports/hall-config.js';
import { bindingInFlight } from '../../domain/cron-plan.js';
import {
  newCronRecord,
  noteRunEvent,
  outcomeFromReply,
  outcomeWithoutRun,
  withOutcome,
  withPending,
  type CronOutcome,
  type RunEvent,
} from '../../domain/cron-record.js';
import {
  cronBinding,
  cronJobMachine,
  type ClaimInput,
  type CronJobEvent,
  type FireInput,
  type ProbeInput,
  type RecordInput,
} from '../../machines/cron-job.machine.js';
import { missionsInFlight, type CronRecords } from './cron-records.js';
import { errorMessage } from '../../domain/error-message.js';

export interface CronJobWorld {
  services: HallServices;
  records: CronRecords;
  now: () => number;
  /** True once the hall stops: no occurrence is handed over any more. */
  stopping: () => boolean;
  /** Run events that arrived for a mission before its hand-over finished (a very short run). */
  earlyEvents: Map<string, RunEvent[]>;
}

export function cronJobLogic(job: CronJobConfig, world: CronJobWorld) {
  const { services, records, now } = world;
  const record = () => records.get(job.id) ?? newCronRecord(now());
  const fail = (sendBack: (e: EventObject) => void, isStopped: () => boolean) => (err: unknown) => {
    const error = errorMessage(err);
    services.log(`cron job ${job.id}: ${error}`);
    const failed: CronJobEvent = { type: 'failed', error };
    if (!isStopped()) sendBack(failed);
  };
  /** Runs `work` and sends back the event it ends with (none for null), unless the actor was stopped by then. */
  const answer = (sendBack: (e: EventObject) => void, work: () => Promise<CronJobEvent | null>, what?: string): (() => void) => {
    let stopped = false;
    work()
      .then((event) => {
        if (event !== null && !stopped) sendBack(event);
      })
      .catch((err: unknown) => fail(sendBack, () => stopped)(what === undefined ? err : `${what}: ${errorMessage(err)}`));
    return () => {
      stopped = true;
    };
  };

  const faces = services.store.shared?.faces;

  return cronJobMachine.provide({
    actors: {
      // On a shared cluster the first hall to claim an occurrence in the database fires it; a hall alone keeps the default.
      ...(faces
        ? {
            claimSlot: fromCallback<EventObject, ClaimInput>(({ input, sendBack }) => {
              // A stopping hall claims nothing: the halls that go on fire it.
              if (world.stopping()) return;
              return answer(
                sendBack,
                async () => ({ type: (await faces.claimCronSlot(job.id, input.slot)) ? 'claimed' : 'taken' }),
                'cannot claim the occurrence in the cluster',
              );
            }),
          }
        : {}),

      readClock: fromCallback<EventObject, void>(({ sendBack }) => {
        sendBack({ type: 'clock', now: now() });
      }),

      probe: fromCallback<EventObject, ProbeInput>(({ input, sendBack }) => {
        if (!faces) {
          sendBack({ type: 'probed', inFlight: bindingInFlight(input.binding, missionsInFlight(services.store.state)) });
          return;
        }
        // The previous occurrence may wait in the cluster's queue or run on another hall.
        return answer(
          sendBack,
          async () => ({ type: 'probed', inFlight: await faces.bindingBusy(input.binding) }),
          'cannot ask the cluster about the previous occurrence',
        );
      }),

      fire: fromCallback<EventObject, FireInput>(({ input, sendBack }) =>
        answer(sendBack, async () => {
          if (world.stopping()) return null; // the slot stays unhandled: the next start sees it as missed
          const before = record();
          const missionId = services.newMissionId();
          // Written first: a hall that dies after the hall took the mission must not fire this slot again.
          await records.save(job.id, withPending(before, input.slot, missionId));
          if (world.stopping()) {
            await records.save(job.id, before);
            return null;
          }
          const reply = await services.request({
            type: 'cmd.spawn',
            missionId,
            name: job.name,
            mission: job.mission,
            binding: cronBinding(job.id),
            at: now(),
          });
          let outcome: CronOutcome = outcomeFromReply(input.slot, missionId, reply, now(), input.late);
          for (const event of world.earlyEvents.get(missionId) ?? []) outcome = noteRunEvent(outcome, event) ?? outcome;
          world.earlyEvents.delete(missionId);
          await records.save(job.id, withOutcome(record(), outcome));
          if (outcome.result === 'error') services.log(`cron job ${job.id}: the hall did not take the occurrence: ${outcome.error}`);
          return { type: 'fired', outcome };
        }),
      ),

      record: fromCallback<EventObject, RecordInput>(({ input, sendBack }) =>
        answer(sendBack, async () => {
          await records.save(job.id, withOutcome(record(), outcomeWithoutRun(input.slot, input.result, now())));
          return { type: 'recorded' };
        }),
      ),
    },
  });
}
