/**
 * `raider hall status` wall time: the built CLI (`node bin/raider hall status
 * ROOT`) against a running hall, side by side with `node -e 0` (the floor of
 * any Node CLI), interleaved round by round. A third column imports the
 * module graph of `raider hall ...` and exits without talking to the hall,
 * to split module loading from the rest; a fourth imports only what a client
 * command needs (commander, hall-client, render, dir-args, follow).
 * Target: median under 150 ms.
 *
 *   node --import tsx bench/cli-status.ts [--quick] [--runs N]
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  count,
  fmt,
  machine,
  nowMs,
  RAIDER_BIN,
  REPO,
  runMain,
  startHall,
  stats,
  STATS_HEADERS,
  statsRow,
  summary,
  table,
  tempRoot,
  writeMinimalRaider,
} from './lib.js';

const TARGET_MEDIAN_MS = 150;

function argNumber(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : undefined;
}

/** Runs `node ARGS` to its end; resolves with the wall time in ms. */
function timeNode(args: string[], expectStdout?: RegExp): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = nowMs() - t0;
      if (code !== 0) return reject(new Error(`node ${args.join(' ')} exited ${code}: ${err}`));
      if (expectStdout && !expectStdout.test(out)) return reject(new Error(`unexpected output of node ${args.join(' ')}: ${out}`));
      resolve(ms);
    });
  });
}

runMain(async () => {
  const runs = argNumber('--runs') ?? count(30, 8);
  console.log(`# raider hall status: ${runs} runs each (+2 warm-up), interleaved, ${machine()}`);
  const root = tempRoot('cli-status');
  const { hall } = await startHall(root, writeMinimalRaider(root));

  const dist = (file: string) => JSON.stringify(pathToFileURL(path.join(REPO, 'dist', 'cli', 'hall', file)).href);
  // What a client command needs: commander and the client side of dist/cli/hall.
  const clientOnly = ['hall-client.js', 'render.js', 'dir-args.js', 'follow.js'].map((f) => `import(${dist(f)})`).join(', ');
  const sides = {
    floor: () => timeNode(['-e', '0']),
    clientImports: () => timeNode(['--input-type=module', '-e', `await Promise.all([import('commander'), ${clientOnly}])`]),
    imports: () => timeNode(['--input-type=module', '-e', `await import(${dist('hall-command.js')})`]),
    status: () => timeNode([RAIDER_BIN, 'hall', 'status', root], /\S/),
  };
  const results: Record<keyof typeof sides, number[]> = { floor: [], clientImports: [], imports: [], status: [] };
  const order = Object.keys(sides) as Array<keyof typeof sides>;

  for (let i = 0; i < 2; i++) for (const k of order) await sides[k]();
  // The two import columns only explain the status figure: fewer rounds of them.
  const diagnosticRuns = Math.min(runs, 10);
  for (let i = 0; i < runs; i++) {
    // Rotate the order each round so no side always runs first.
    for (let j = 0; j < order.length; j++) {
      const k = order[(i + j) % order.length]!;
      if ((k === 'clientImports' || k === 'imports') && i >= diagnosticRuns) continue;
      results[k].push(await sides[k]());
    }
  }
  await hall.stop();

  const floor = stats(results.floor);
  const clientImports = stats(results.clientImports);
  const imports = stats(results.imports);
  const status = stats(results.status);
  console.log('');
  console.log(
    table(STATS_HEADERS, [
      statsRow('node -e 0 (ms)', floor, 1),
      statsRow('node: import commander + client modules only (ms)', clientImports, 1),
      statsRow('node: import dist/cli/hall/hall-command.js (ms)', imports, 1),
      statsRow('node bin/raider hall status ROOT (ms)', status, 1),
    ]),
  );
  console.log('');
  console.log(`status median ${fmt(status.median, 1)} ms, p90 ${fmt(status.p90, 1)} ms; ${fmt(status.median / floor.median)}x the node floor (+${fmt(status.median - floor.median, 1)} ms)`);
  console.log(`of the excess, loading hall-command.js and its static imports: +${fmt(imports.median - floor.median, 1)} ms; the rest (parse, socket, render): +${fmt(status.median - imports.median, 1)} ms`);
  console.log(`a client command needs only commander + hall-client/render/dir-args/follow: +${fmt(clientImports.median - floor.median, 1)} ms over the floor`);
  console.log(`target: median < ${TARGET_MEDIAN_MS} ms: ${status.median < TARGET_MEDIAN_MS ? 'met' : 'MISSED'}`);

  summary([
    { bench: 'cli-status', metric: `node -e 0 median / p90 (ms), n=${runs}`, value: `${fmt(floor.median, 1)} / ${fmt(floor.p90, 1)}` },
    {
      bench: 'cli-status',
      metric: 'raider hall status median / p90 (ms)',
      value: `${fmt(status.median, 1)} / ${fmt(status.p90, 1)} (${fmt(status.median / floor.median)}x floor)`,
      target: `median < ${TARGET_MEDIAN_MS} ms`,
      met: status.median < TARGET_MEDIAN_MS,
    },
  ]);
});
