/**
 * The machines alone on the path of a start: the hall, its slot, the run host
 * and the run, from `cmd.spawn` to the reply with the pid, in one process,
 * with the fake OS actors of the machine tests (test/support/fake-actors.ts:
 * a preparation that resolves at once, a raider that "starts" in the same
 * call). No socket, no file, no process: what is timed is the machines' own
 * steps (XState's transitions, actions, actor creation, the emitted effects),
 * so a change in the number of steps shows here even on a machine too busy
 * for bench/spawn-latency.ts to see it. An inspection observer is attached,
 * as the hall always has one (a no-op here: the hall's own does more).
 *
 * With --before DIR the same machines of another checkout (DIR/src and
 * DIR/test/support, loaded by tsx) run beside these, in turn.
 *
 *   node --import tsx bench/machine-steps.ts [--quick] [--n N] [--before DIR]
 */
import path from 'node:path';
import { createActor } from 'xstate';
import { hallWithRunActors } from '../src/machines/hall-tree.js';
import { createFakeWorld, fakeActors, fakeHallInput } from '../test/support/fake-actors.js';
import { argNumber, count, fmt, machine, runMain, STATS_HEADERS, stats, statsRow, summary, table } from './lib.js';

type Build = { hallWithRunActors: typeof hallWithRunActors; createFakeWorld: typeof createFakeWorld; fakeActors: typeof fakeActors };

/** A hall of one build's machines that starts one run at a time; resolves with the µs from cmd.spawn to its reply. */
function hallOf(build: Build): () => Promise<number> {
  const world = build.createFakeWorld(() => 1_800_000_000_000);
  const hall = createActor(build.hallWithRunActors(build.fakeActors(world)), {
    id: 'hall',
    // The same input for either build's machines.
    input: fakeHallInput(),
  });
  let replied: ((id: string) => void) | null = null;
  let ended: (() => void) | null = null;
  hall.on('reply', (e) => {
    if ('id' in e.body && typeof e.body.id === 'string') replied?.(e.body.id);
  });
  hall.on('bus', (e) => {
    if (e.event.type === 'raider.done') ended?.();
  });
  hall.system.inspect(() => undefined);
  hall.start();
  hall.send({ type: 'hall.boot', at: 0 });
  let seq = 0;
  return async () => {
    const name = seq % 2 === 0 ? 'bjorn' : '1bjorn';
    const reply = new Promise<string>((resolve) => {
      replied = resolve;
    });
    const t0 = performance.now();
    hall.send({ type: 'cmd.spawn', reqId: `r${seq}`, missionId: `m${seq++}`, name, mission: 'go', at: 0 });
    const runId = await reply;
    const us = (performance.now() - t0) * 1000;
    const done = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const proc = world.processes.get(runId);
    if (!proc) throw new Error(`no process for ${runId}`);
    proc.exit({ code: 0 }, { version: 1, status: 'completed', response: 'ok' });
    await done;
    // The fake world keeps what it saw: forget it, so that nothing grows with the count.
    world.processes.delete(runId);
    world.prepared.length = 0;
    world.timeline.length = 0;
    return us;
  };
}

runMain(async () => {
  const n = argNumber('--n') ?? count(20_000, 4_000);
  const i = process.argv.indexOf('--before');
  const before = i >= 0 ? process.argv[i + 1] : undefined;
  console.log(`# machine steps: ${n} starts each (a plain and a numbered slot in turn), a quarter of them warm-up, ${machine()}`);
  const sides = [{ label: 'this build', once: hallOf({ hallWithRunActors, createFakeWorld, fakeActors }), us: [] as number[] }];
  if (before !== undefined) {
    const root = path.resolve(before);
    const tree = (await import(path.join(root, 'src/machines/hall-tree.ts'))) as Pick<Build, 'hallWithRunActors'>;
    const fakes = (await import(path.join(root, 'test/support/fake-actors.ts'))) as Pick<Build, 'createFakeWorld' | 'fakeActors'>;
    sides.push({ label: `the build in ${before}`, once: hallOf({ ...tree, ...fakes }), us: [] });
  }
  for (let k = 0; k < n; k++) {
    for (let j = 0; j < sides.length; j++) {
      const side = sides[(k + j) % sides.length]!;
      const us = await side.once();
      if (k >= n / 4) side.us.push(us);
    }
  }
  const rows = sides.map((s) => ({ label: s.label, stats: stats(s.us) }));
  console.log(
    table(
      STATS_HEADERS,
      rows.map((r) => statsRow(`${r.label}: cmd.spawn → reply (µs)`, r.stats)),
    ),
  );
  summary(
    rows.map((r) => ({
      bench: 'machine-steps',
      metric: `${r.label}: cmd.spawn → reply, machines alone, median / p90 (µs)`,
      value: `${fmt(r.stats.median, 1)} / ${fmt(r.stats.p90, 1)}`,
    })),
  );
});
