// Loaded into a hall process with `node --import bench/memory-hook.mjs` by
// `bench/memory.ts`: on SIGUSR2 writes the hall's process.memoryUsage() and
// V8's heap spaces as JSON to $BENCH_MEMORY_OUT. The hall does not use SIGUSR2
// itself; the hook's own cost (one small module) shows as the difference
// between the "default" and "default + hook" rows of the bench.
import fs from 'node:fs';
import v8 from 'node:v8';

const out = process.env.BENCH_MEMORY_OUT;
if (out) {
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
    fs.writeFileSync(out, JSON.stringify({ usage: process.memoryUsage(), spaces }));
  });
}
