/**
 * The live runs of one slot, held outside the slot's snapshot.
 *
 * Why not children of the slot: XState copies a parent's `children` object
 * on every spawn and every stop, and once a child has been deleted from it
 * that copy takes the slow path, so a slot with a thousand live runs paid
 * O(n) per run start and end (profiled: 1.8 ms of hall CPU per mission in a
 * burst of 1,000). The host keeps its runs in a Map instead; each run is an
 * actor of the same system, found by its system id `run:ID`, with the host
 * as its parent. What a run tells its parent goes on unchanged, in order:
 * its record and its pid (`run.prepared`, `run.spawned`) to the hall, whose
 * business they are (through the slot they cost a macrostep more each, on
 * the path of every start), its done or error event to the slot.
 *
 * Inspection (`raider hall inspect`) sees through the host: the runs in
 * `hosted` count as children of the slot.
 */
import { createActor, type ActorLogic, type ActorRefFrom, type DoneActorEvent, type ErrorActorEvent, type Snapshot } from 'xstate';
import type { RunEvent, RunInput, RunOutput, RunPreparedReport, RunSpawnedReport, runMachine } from './run.machine.js';

/** What a slot asks of its run host. */
export type RunHostCommand =
  | { type: 'runs.start'; input: RunInput }
  /** An event for each of these runs that still lives. */
  | { type: 'runs.send'; runIds: readonly string[]; event: RunEvent };

/** What a run tells its parent, passed on: its record and pid to the hall, its end to the slot. */
export type RunReport = RunPreparedReport | RunSpawnedReport | DoneActorEvent<RunOutput> | ErrorActorEvent;

export type RunHostEvent = RunHostCommand | RunReport;

type RunRef = ActorRefFrom<typeof runMachine>;

export type RunHostSnapshot = Snapshot<undefined> & {
  /** The live runs by actor id (`run:ID`). */
  hosted: Map<string, RunRef>;
};

export type RunHostLogic = ActorLogic<RunHostSnapshot, RunHostEvent, undefined>;

const ENDED = ['xstate.done.actor.', 'xstate.error.actor.'];

export function runActorId(runId: string): string {
  return `run:${runId}`;
}

function endedRun(type: string): string | undefined {
  for (const prefix of ENDED) if (type.startsWith(prefix)) return type.slice(prefix.length);
  return undefined;
}

export function runHostLogic(runLogic: typeof runMachine): RunHostLogic {
  return {
    getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined, hosted: new Map() }),
    transition: (snapshot, event, { self, defer, stopChild }) => {
      // XState stops an actor by sending it this event, which is no event of ours.
      if ((event as { type: string }).type === 'xstate.stop') {
        // As a machine stops its children: each run stops its raider process.
        const runs = [...snapshot.hosted.values()];
        defer(() => {
          for (const run of runs) stopChild(run);
        });
        return { status: 'stopped', output: undefined, error: undefined, hosted: new Map() };
      }
      if (snapshot.status !== 'active') return snapshot;
      switch (event.type) {
        case 'runs.start': {
          const id = runActorId(event.input.runId);
          const run: RunRef = createActor(runLogic, { id, systemId: id, input: event.input, parent: self });
          snapshot.hosted.set(id, run);
          defer(() => run.start());
          return snapshot;
        }
        case 'runs.send': {
          const runs = event.runIds.map((runId) => snapshot.hosted.get(runActorId(runId)));
          const message = event.event;
          defer(() => {
            for (const run of runs) run?.send(message);
          });
          return snapshot;
        }
        default: {
          // A run's report: an ended run is already stopped by XState; forget it, and pass the report on.
          const ended = endedRun(event.type);
          if (ended !== undefined) snapshot.hosted.delete(ended);
          // The host's parent is the slot, the slot's the hall.
          const to = event.type === 'run.prepared' || event.type === 'run.spawned' ? self._parent?._parent : self._parent;
          defer(() => to?.send(event));
          return snapshot;
        }
      }
    },
    getPersistedSnapshot: (snapshot) => ({ status: snapshot.status, output: undefined, error: undefined }),
  };
}
