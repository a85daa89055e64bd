/**
 * The ACP bridge's start: from the spawn of `raider acp-client` to the
 * moment its agent reads the `initialize` request, interleaved round by
 * round, for
 *   - the agent alone (a stand-in that notes when its stdin first has data,
 *     started with a line waiting for it): the floor, one Node start;
 *   - the bridge as `bin/raider` starts it: from its CommonJS bundle
 *     (dist/acp-raider/acp-raider.bundle.cjs, scripts/bundle-cli.ts);
 *   - the bridge through dist/cli/main.js, the ES modules one by one (what
 *     `bin/raider` falls back to, and what it did before the bundle).
 * The stand-in exits once it has the request, so each bridge run ends failed;
 * only the time to `initialize` is read.
 *
 *   node --import tsx bench/acp-bridge-start.ts [--quick] [--rounds N]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  argNumber,
  count,
  epochMs,
  fmt,
  machine,
  RAIDER_BIN,
  REPO,
  runMain,
  stats,
  STATS_HEADERS,
  statsRow,
  summary,
  table,
  tempRoot,
} from './lib.js';

const STAND_IN = `const fs = require('node:fs');
process.stdin.once('data', () => {
  fs.writeFileSync(process.env.BENCH_STAMP, String(performance.timeOrigin + performance.now()));
  process.exit(0);
});
`;

/** Spawns `node ARGS`, waits for its end, and returns the ms from the spawn to the stamp the stand-in wrote. */
function timeToInitialize(args: string[], stamp: string, input?: string): Promise<number> {
  fs.rmSync(stamp, { force: true });
  return new Promise((resolve, reject) => {
    const t0 = epochMs();
    const child = spawn(process.execPath, args, {
      cwd: REPO,
      env: { ...process.env, BENCH_STAMP: stamp },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
    child.on('error', reject);
    child.on('close', () => {
      try {
        resolve(Number(fs.readFileSync(stamp, 'utf8')) - t0);
      } catch (err) {
        reject(new Error(`no initialize reached the stand-in for node ${args.join(' ')}: ${String(err)}`));
      }
    });
  });
}

runMain(async () => {
  const rounds = argNumber('--rounds') ?? count(25, 6);
  console.log(`# the ACP bridge's start, spawn to the agent's initialize: ${rounds} rounds (+2 warm-up), interleaved, ${machine()}`);
  const dir = tempRoot('acp-bridge-start');
  const standIn = path.join(dir, 'stand-in.cjs');
  fs.writeFileSync(standIn, STAND_IN);
  const stamp = path.join(dir, 'stamp');
  const bridgeArgs = ['acp-client', '--agent-command', process.execPath, `--agent-arg=${standIn}`, '--', 'hello'];
  const main = path.join(REPO, 'dist', 'cli', 'main.js');
  const sides = {
    agent: () => timeToInitialize([standIn], stamp, '{"jsonrpc":"2.0","id":0,"method":"initialize"}\n'),
    bundled: () => timeToInitialize([RAIDER_BIN, ...bridgeArgs], stamp),
    unbundled: () => timeToInitialize(['-e', `import(${JSON.stringify(main)}).then((m) => m.main(${JSON.stringify(bridgeArgs)}))`], stamp),
  };
  const results: Record<keyof typeof sides, number[]> = { agent: [], bundled: [], unbundled: [] };
  const order = Object.keys(sides) as Array<keyof typeof sides>;
  for (let i = 0; i < 2; i++) for (const k of order) await sides[k]();
  for (let i = 0; i < rounds; i++) for (const k of order) results[k].push(await sides[k]());

  const s = { agent: stats(results.agent), bundled: stats(results.bundled), unbundled: stats(results.unbundled) };
  console.log(
    table(STATS_HEADERS, [
      statsRow('agent alone (ms)', s.agent, 0),
      statsRow('bridge, bundled (ms)', s.bundled, 0),
      statsRow('bridge, unbundled (ms)', s.unbundled, 0),
    ]),
  );
  const bench = 'acp-bridge-start';
  summary([
    { bench, metric: 'spawn to initialize, bridge bundled, median', value: `${fmt(s.bundled.median, 0)} ms` },
    { bench, metric: 'spawn to initialize, bridge unbundled, median', value: `${fmt(s.unbundled.median, 0)} ms` },
    { bench, metric: 'spawn to initialize, agent alone, median', value: `${fmt(s.agent.median, 0)} ms` },
  ]);
});
