/**
 * The I/O behind a cron job machine: the wall clock, a look at what the hall
 * still runs or keeps waiting, handing an occurrence to the hall, and
 * recording a slot handled without a run. Each answers the machine with an
 * event; failures are logged and answered `failed` (the slot still counts as
 * handled, so it is never fired twice).
 */
import { fromCallback, type EventObject } from 'xstate';
import type { HallServices } from '../../ports/hall-services.js';
import type { CronJobConfig } from '../config/hall-config.js';
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

  const faces = services.store.shared?.faces;

  return cronJobMachine.provide({
    actors: {
      // On a shared cluster the first hall to claim an occurrence in the database fires it; a hall alone keeps the default.
      ...(faces
        ? {
            claimSlot: fromCallback<EventObject, ClaimInput>(({ input, sendBack }) => {
              let stopped = false;
              // A stopping hall claims nothing: the halls that go on fire it.
              if (world.stopping()) return;
              faces
                .claimCronSlot(job.id, input.slot)
                .then((mine) => {
                  if (!stopped) sendBack({ type: mine ? 'claimed' : 'taken' });
                })
                .catch((err: unknown) => fail(sendBack, () => stopped)(`cannot claim the occurrence in the cluster: ${errorMessage(err)}`));
              return () => {
                stopped = true;
              };
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
        let stopped = false;
        faces
          .bindingBusy(input.binding)
          .then((inFlight) => {
            if (!stopped) sendBack({ type: 'probed', inFlight });
          })
          .catch((err: unknown) =>
            fail(sendBack, () => stopped)(`cannot ask the cluster about the previous occurrence: ${errorMessage(err)}`),
          );
        return () => {
          stopped = true;
        };
      }),

      fire: fromCallback<EventObject, FireInput>(({ input, sendBack }) => {
        let stopped = false;
        const handOver = async (): Promise<void> => {
          if (world.stopping()) return; // the slot stays unhandled: the next start sees it as missed
          const before = record();
          const missionId = services.newMissionId();
          // Written first: a hall that dies after the hall took the mission must not fire this slot again.
          await records.save(job.id, withPending(before, input.slot, missionId));
          if (world.stopping()) {
            await records.save(job.id, before);
            return;
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
          if (!stopped) sendBack({ type: 'fired', outcome });
        };
        handOver().catch(fail(sendBack, () => stopped));
        return () => {
          stopped = true;
        };
      }),

      record: fromCallback<EventObject, RecordInput>(({ input, sendBack }) => {
        let stopped = false;
        records
          .save(job.id, withOutcome(record(), outcomeWithoutRun(input.slot, input.result, now())))
          .then(() => {
            if (!stopped) sendBack({ type: 'recorded' });
          })
          .catch(fail(sendBack, () => stopped));
        return () => {
          stopped = true;
        };
      }),
    },
  });
}
