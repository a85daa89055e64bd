/**
 * Fake actor logic for machine tests: a process the test ends by hand (which
 * first notes that its run waited for its record, as the real one waits), a
 * prepare step that admits or refuses, and a reap step that computes the
 * outcome as the real one does, without files.
 */
import { fromCallback, fromPromise } from 'xstate';
import type {
  PrepareOutput,
  ProcessCommand,
  ProcessInput,
  ReapInput,
  RunInput,
  RunSignal,
  SettleInput,
} from '../../src/machines/run.machine.js';
import { runOutcome, type RunDocument } from '../../src/domain/outcome.js';
import type { HallInput } from '../../src/machines/hall.machine.js';

export interface FakeProcess {
  runId: string;
  pid: number;
  signals: RunSignal[];
  /** The time (ManualClock ms) each signal arrived. */
  signalTimes: number[];
  stopped: boolean;
  exit(exit: { code?: number | null; signal?: string | null }, document?: RunDocument | null): void;
}

export interface FakeWorld {
  processes: Map<string, FakeProcess>;
  prepared: RunInput[];
  /** What the reap step reads from the run's events file. */
  documents: Map<string, RunDocument | null>;
  refuse: Map<string, { reason: 'provider_not_stored'; error: string }>;
  failPrepare: Set<string>;
  /** Missions whose process waits for `releaseRecords()` and then fails unstarted (a shared cluster refused the record). */
  refuseRecord: Set<string>;
  releaseRecords: () => void;
  /** What happened to runs, in order: `written RUN` when a run's record was found written (its process may start), `spawned RUN` when its process started. */
  timeline: string[];
  nextPid: number;
  now: () => number;
}

const SIGNALS: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

export function createFakeWorld(now: () => number = () => 0): FakeWorld {
  return {
    processes: new Map(),
    prepared: [],
    documents: new Map(),
    refuse: new Map(),
    failPrepare: new Set(),
    refuseRecord: new Set(),
    releaseRecords: () => undefined,
    timeline: [],
    nextPid: 1000,
    now,
  };
}

export function fakeActors(world: FakeWorld) {
  const prepareRun = fromPromise<PrepareOutput, RunInput>(async ({ input }) => {
    world.prepared.push(input);
    if (world.failPrepare.has(input.entry.name)) throw new Error('disk full');
    const refusal = world.refuse.get(input.baseName);
    if (refusal) return { kind: 'refused', ...refusal, at: world.now() };
    const created = input.binding !== undefined && input.session === undefined;
    return {
      kind: 'ready',
      eventsPath: `/logs/${input.runId}.events.jsonl`,
      logPath: `/logs/${input.slot}.log`,
      ...(input.binding !== undefined ? { session: input.session ?? `sess-${input.runId}`, sessionCreated: created } : {}),
      startedAt: world.now(),
      spawn: { command: 'raider', args: ['--', input.entry.mission], env: {}, cwd: '/' },
    };
  });

  const raiderProcess = fromCallback<ProcessCommand, ProcessInput>(({ input, sendBack, receive }) => {
    if (input.adoptedPid === undefined && world.prepared.some((p) => p.runId === input.runId && world.refuseRecord.has(p.entry.mission))) {
      world.releaseRecords = () =>
        sendBack({ type: 'proc.failed', error: 'the cluster gave its mission to another hall', at: world.now() });
      return undefined;
    }
    // The real actor waits for the record before the fork server (test/integration/raider-process.test.ts); this one marks where.
    if (input.adoptedPid === undefined) world.timeline.push(`written ${input.runId}`);
    const pid = input.adoptedPid ?? world.nextPid++;
    const proc: FakeProcess = {
      runId: input.runId,
      pid,
      signals: [],
      signalTimes: [],
      stopped: false,
      exit(exit, document = null) {
        world.documents.set(input.runId, document);
        sendBack({
          type: 'proc.exited',
          exit: { code: exit.code ?? null, signal: exit.signal ?? null, signalNumber: exit.signal ? (SIGNALS[exit.signal] ?? null) : null },
          at: world.now(),
        });
      },
    };
    world.processes.set(input.runId, proc);
    world.timeline.push(`spawned ${input.runId}`);
    receive((cmd) => {
      proc.signals.push(cmd.signal);
      proc.signalTimes.push(world.now());
    });
    if (input.adoptedPid === undefined) sendBack({ type: 'proc.spawned', pid, at: world.now() });
    return () => {
      proc.stopped = true;
    };
  });

  const reapRun = fromPromise(async ({ input }: { input: ReapInput }) =>
    runOutcome({
      runId: input.runId,
      document: world.documents.get(input.runId) ?? null,
      exit: input.exit ?? { code: null, signal: null, signalNumber: null },
      ...(input.binding !== undefined ? { binding: input.binding } : {}),
      ...(input.session !== undefined ? { session: input.session } : {}),
      stop: input.stop,
    }),
  );

  const settleWorktree = fromPromise(async ({ input }: { input: SettleInput }) => input.outcome);

  return { prepareRun, raiderProcess, reapRun, settleWorktree };
}

/** Lets promise-based actors (prepare, reap) settle. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A fresh hall's input as the machine tests start one (root `/hall`, nothing left by a previous hall), with `input` over it. */
export function fakeHallInput(input: Partial<HallInput> = {}): HallInput {
  return {
    root: '/hall',
    graceMs: 5000,
    shutdownGraceMs: 5000,
    slotQueues: {},
    bindingQueues: {},
    sessions: {},
    runIdCursors: {},
    adopted: [],
    ended: [],
    ...input,
  };
}
