/**
 * `raider hall status` wall time: the built CLI (`node bin/raider hall status
 * ROOT`) against a running hall, side by side with `node -e 0` (the floor of
 * any Node CLI), interleaved round by round. A third column loads the hall
 * command's bundle (dist/cli/hall.bundle.cjs) and exits without talking to
 * the hall, to split module loading from the rest.
 *
 * When NODE_EXTRA_CA_CERTS is set, Node 20 parses its whole root store plus
 * that file before any JavaScript runs (tens of ms on this machine); two more
 * columns then show the floor and the command without it.
 * Target: median under 150 ms.
 *
 *   node --import tsx bench/cli-status.ts [--quick] [--runs N]
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
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
function timeNode(args: string[], expectStdout?: RegExp, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const child = spawn(process.execPath, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

  const extraCaCerts = process.env.NODE_EXTRA_CA_CERTS;
  const { NODE_EXTRA_CA_CERTS: _dropped, ...envWithoutCa } = process.env;
  const sides = {
    floor: () => timeNode(['-e', '0']),
    load: () => timeNode(['-e', `require(${JSON.stringify(path.join(REPO, 'dist', 'cli', 'hall.bundle.cjs'))})`]),
    status: () => timeNode([RAIDER_BIN, 'hall', 'status', root], /\S/),
    floorNoCa: () => timeNode(['-e', '0'], undefined, envWithoutCa),
    statusNoCa: () => timeNode([RAIDER_BIN, 'hall', 'status', root], /\S/, envWithoutCa),
  };
  const results: Record<keyof typeof sides, number[]> = { floor: [], load: [], status: [], floorNoCa: [], statusNoCa: [] };
  const order = (Object.keys(sides) as Array<keyof typeof sides>).filter((k) => extraCaCerts || !k.endsWith('NoCa'));
  const diagnostic = new Set<keyof typeof sides>(['load', 'floorNoCa', 'statusNoCa']);

  for (let i = 0; i < 2; i++) for (const k of order) await sides[k]();
  // The diagnostic columns only explain the status figure: fewer rounds of them.
  const diagnosticRuns = Math.min(runs, 10);
  for (let i = 0; i < runs; i++) {
    // Rotate the order each round so no side always runs first.
    for (let j = 0; j < order.length; j++) {
      const k = order[(i + j) % order.length]!;
      if (diagnostic.has(k) && i >= diagnosticRuns) continue;
      results[k].push(await sides[k]());
    }
  }
  await hall.stop();

  const floor = stats(results.floor);
  const load = stats(results.load);
  const status = stats(results.status);
  const rows = [
    statsRow('node -e 0 (ms)', floor, 1),
    statsRow('node: require dist/cli/hall.bundle.cjs (ms)', load, 1),
    statsRow('node bin/raider hall status ROOT (ms)', status, 1),
  ];
  if (extraCaCerts) {
    rows.push(statsRow('node -e 0, no NODE_EXTRA_CA_CERTS (ms)', stats(results.floorNoCa), 1));
    rows.push(statsRow('hall status, no NODE_EXTRA_CA_CERTS (ms)', stats(results.statusNoCa), 1));
  }
  console.log('');
  console.log(table(STATS_HEADERS, rows));
  console.log('');
  console.log(
    `status median ${fmt(status.median, 1)} ms, p90 ${fmt(status.p90, 1)} ms; ${fmt(status.median / floor.median)}x the node floor (+${fmt(status.median - floor.median, 1)} ms)`,
  );
  console.log(
    `of the excess, loading the bundle: +${fmt(load.median - floor.median, 1)} ms; the rest (parse, socket, render): +${fmt(status.median - load.median, 1)} ms`,
  );
  if (extraCaCerts) {
    const noCa = stats(results.statusNoCa);
    console.log(
      `NODE_EXTRA_CA_CERTS=${extraCaCerts} costs every Node process +${fmt(floor.median - stats(results.floorNoCa).median, 1)} ms at start; without it status takes ${fmt(noCa.median, 1)} ms`,
    );
  }
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
    ...(extraCaCerts
      ? [
          {
            bench: 'cli-status',
            metric: `without NODE_EXTRA_CA_CERTS: node -e 0 / raider hall status median (ms), n=${results.statusNoCa.length}`,
            value: `${fmt(stats(results.floorNoCa).median, 1)} / ${fmt(stats(results.statusNoCa).median, 1)}`,
          },
        ]
      : []),
  ]);
});
