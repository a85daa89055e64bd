// Loaded into a hall process with `node --import bench/loop-stall-hook.mjs`
// by `bench/loop-stall.ts`. Watches the hall's event loop (perf_hooks'
// delay histogram, 1 ms resolution) and, where the hall starts raiders
// itself, times what each start holds the loop: the synchronous part of
// libexec/spawn-process.cjs's startAsync (and of start, were it used),
// wrapped here before the hall loads it. Each start's time comes with the
// time the thread waited on a run queue meanwhile (/proc/thread-self/schedstat):
// on a busy machine, the kernel's, not the start's. On SIGUSR2 writes both as JSON to
// $BENCH_LOOP_OUT and starts counting afresh. The hall does not use SIGUSR2.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const out = process.env.BENCH_LOOP_OUT;
if (out) {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let starts = [];
  let waits = [];
  /** A control after each start: 0.1 ms of busy work, timed the same way (what the machine adds to anything that short). */
  let controls = [];
  const control = () => {
    const t0 = process.hrtime.bigint();
    while (process.hrtime.bigint() - t0 < 100_000n);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  /** How long this thread has waited on a run queue (ns): time the kernel gave other threads, not a block of ours. */
  const runQueueWait = () => {
    try {
      return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]);
    } catch {
      return 0;
    }
  };
  const spawnProcess = createRequire(import.meta.url)(new URL('../libexec/spawn-process.cjs', import.meta.url).pathname);
  const load = spawnProcess.loadPosixSpawn;
  spawnProcess.loadPosixSpawn = () => {
    const posix = load();
    if (posix.start === null) return posix;
    const timed =
      (fn) =>
      (...args) => {
        const w0 = runQueueWait();
        const t0 = process.hrtime.bigint();
        try {
          return fn(...args);
        } finally {
          starts.push(Number(process.hrtime.bigint() - t0) / 1e6);
          waits.push((runQueueWait() - w0) / 1e6);
          controls.push(control());
        }
      };
    return { ...posix, start: timed(posix.start), startAsync: timed(posix.startAsync) };
  };
  process.on('SIGUSR2', () => {
    const ms = (ns) => ns / 1e6;
    fs.writeFileSync(
      out,
      JSON.stringify({
        loop: { max: ms(loop.max), p99: ms(loop.percentile(99)), p50: ms(loop.percentile(50)), count: loop.count },
        starts,
        waits,
        controls,
      }),
    );
    loop.reset();
    starts = [];
    waits = [];
    controls = [];
  });
}
