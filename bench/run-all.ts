/**
 * Runs every benchmark in turn, each in a child process of its own (a crash
 * or a hang of one does not stop the others), then prints one summary table.
 *
 *   npm run bench                     -- all of them, default sizes
 *   npm run bench -- --quick          -- smaller counts (a smoke run)
 *   npm run bench -- --only queue     -- one of them (repeatable)
 *   npm run bench -- --write-results  -- also rewrite bench/RESULTS.md
 *
 * Nothing here asserts on time: the figures and the targets are printed.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lineSink, MAX_MESSAGE_BYTES } from '../src/protocol/line-reader.js';
import { killUnder, machine, REPO, SUMMARY_PREFIX, table, type SummaryRow } from './lib.js';

interface Bench {
  name: string;
  file: string;
  /** A hung benchmark is stopped after this long. */
  timeoutMs: number;
}

const BENCHES: Bench[] = [
  { name: 'spawn-latency', file: 'bench/spawn-latency.ts', timeoutMs: 180_000 },
  { name: 'machine-steps', file: 'bench/machine-steps.ts', timeoutMs: 120_000 },
  { name: 'cli-status', file: 'bench/cli-status.ts', timeoutMs: 180_000 },
  { name: 'queue', file: 'bench/queue.ts', timeoutMs: 240_000 },
  { name: 'burst', file: 'bench/burst.ts', timeoutMs: 300_000 },
  { name: 'many-running', file: 'bench/many-running.ts', timeoutMs: 180_000 },
  { name: 'memory', file: 'bench/memory.ts', timeoutMs: 120_000 },
  { name: 'fanout', file: 'bench/fanout.ts', timeoutMs: 180_000 },
  { name: 'acp-latency', file: 'bench/acp-latency.ts', timeoutMs: 180_000 },
  { name: 'acp-agents', file: 'bench/acp-agents.ts', timeoutMs: 600_000 },
  { name: 'acp-bridge-start', file: 'bench/acp-bridge-start.ts', timeoutMs: 180_000 },
  { name: 'fuzz-socket', file: 'bench/fuzz-socket.ts', timeoutMs: 300_000 },
  { name: 'cron-catch-up', file: 'bench/cron-catch-up.ts', timeoutMs: 60_000 },
  { name: 'cluster', file: 'bench/cluster.ts', timeoutMs: 600_000 },
  { name: 'dashboard', file: 'bench/dashboard.ts', timeoutMs: 600_000 },
  { name: 'statechart', file: 'bench/statechart.ts', timeoutMs: 300_000 },
  { name: 'worktrees', file: 'bench/worktrees.ts', timeoutMs: 1_800_000 },
  { name: 'chart-burst', file: 'bench/chart-burst.ts', timeoutMs: 600_000 },
];

const args = process.argv.slice(2);
const quick = args.includes('--quick') || process.env.BENCH_QUICK === '1';
const writeResults = args.includes('--write-results');
const only = args.flatMap((a, i) => (args[i - 1] === '--only' ? [a] : []));
const selected = only.length > 0 ? BENCHES.filter((b) => only.includes(b.name)) : BENCHES;

/** RESULTS.md keeps what follows this line when --write-results rewrites the figures above it. */
const NOTES_MARKER = '<!-- notes: kept when --write-results rewrites the figures above -->';

/** Every temp root of the children lives under this directory, so a final sweep finds their leftovers. */
const benchTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'raider-bench-all-'));

interface Outcome {
  bench: Bench;
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  rows: SummaryRow[];
  timedOut: boolean;
}

function runOne(bench: Bench): Promise<Outcome> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const childArgs = ['--import', 'tsx', bench.file, ...(quick ? ['--quick'] : [])];
    const child = spawn(process.execPath, childArgs, {
      cwd: REPO,
      env: { ...process.env, BENCH_TMP: benchTmp },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    const rows: SummaryRow[] = [];
    const lines = lineSink(
      (line) => {
        if (line.startsWith(SUMMARY_PREFIX)) {
          try {
            rows.push(...(JSON.parse(line.slice(SUMMARY_PREFIX.length)) as SummaryRow[]));
          } catch {
            process.stdout.write(`(unreadable summary line from ${bench.name})\n`);
          }
        } else process.stdout.write(`${line}\n`);
      },
      { maxBytes: MAX_MESSAGE_BYTES, utf8: 'replace' },
    );
    child.stdout.on('data', (chunk: Buffer) => lines.push(chunk));
    let timedOut = false;
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        /* gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      process.stdout.write(`${bench.name}: no end after ${bench.timeoutMs / 1000} s; stopping it\n`);
      kill('SIGTERM');
      setTimeout(() => kill('SIGKILL'), 5000).unref();
    }, bench.timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      lines.flush();
      resolve({ bench, code, signal, ms: Date.now() - t0, rows, timedOut });
    });
  });
}

function commandOf(bench: Bench): string {
  return `node --import tsx ${bench.file}${quick ? ' --quick' : ''}`;
}

async function main(): Promise<number> {
  const started = new Date();
  const t0 = Date.now();
  process.stdout.write(`# Raider Hall benchmarks${quick ? ' (--quick)' : ''}: ${machine()}\n`);
  const outcomes: Outcome[] = [];
  try {
    for (const bench of selected) {
      process.stdout.write(`\n======== ${bench.name}: ${commandOf(bench)}\n`);
      const outcome = await runOne(bench);
      outcomes.push(outcome);
      const leftovers = killUnder(benchTmp);
      if (leftovers > 0) process.stdout.write(`(killed ${leftovers} process(es) ${bench.name} left behind)\n`);
    }
  } finally {
    killUnder(benchTmp);
    fs.rmSync(benchTmp, { recursive: true, force: true });
  }
  const totalS = (Date.now() - t0) / 1000;

  const rows: string[][] = [];
  for (const o of outcomes) {
    for (const r of o.rows) rows.push([r.bench, r.metric, r.value, r.target ?? '', r.met === undefined ? '' : r.met ? 'met' : 'MISSED']);
    if (o.code !== 0 || o.rows.length === 0) {
      const how = o.timedOut ? 'timed out' : o.signal ? `killed by ${o.signal}` : `exit ${o.code}`;
      rows.push([o.bench.name, 'benchmark did not finish', how, '', 'FAILED']);
    }
  }
  const headers = ['bench', 'metric', 'value', 'target', ''];
  process.stdout.write(`\n======== summary (${totalS.toFixed(0)} s in all)\n${table(headers, rows, 5)}\n`);

  if (writeResults) writeResultsFile(started, totalS, outcomes, rows, headers);
  return outcomes.every((o) => o.code === 0) ? 0 : 1;
}

/** ", at commit abc1234 (+ local changes)" when this is a git checkout. */
function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: REPO,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench', 'bin'], {
      cwd: REPO,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return `, at commit ${head}${dirty === '' ? '' : ' (+ uncommitted changes)'}`;
  } catch {
    return '';
  }
}

function writeResultsFile(started: Date, totalS: number, outcomes: Outcome[], rows: string[][], headers: string[]): void {
  const md = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  const lines = [
    '# Benchmark results',
    '',
    `Latest run: ${started.toISOString()}, ${totalS.toFixed(0)} s in all, \`npm run bench -- --write-results${quick ? ' --quick' : ''}\`${commit()}.`,
    '',
    `Machine: ${machine()} (at the end of the run).`,
    '',
    'Targets compare against a baseline measured in the same run (bare spawns of',
    'the same /bin/sh raider, `node -e 0`, an empty hall), so the ratios hold up',
    'on a busy machine better than the absolute figures do.',
    '',
    md(headers.map((h) => h || 'target met')),
    md(headers.map(() => '---')),
    ...rows.map(md),
    '',
    'Each benchmark alone (from the repository root, after `npm ci`):',
    '',
    ...outcomes.map((o) => `- ${o.bench.name}: \`${commandOf(o.bench)}\` (${(o.ms / 1000).toFixed(0)} s)`),
    '',
  ];
  // Notes written by hand below the marker survive a rewrite.
  const file = path.join(REPO, 'bench', 'RESULTS.md');
  let notes = '';
  try {
    const old = fs.readFileSync(file, 'utf8');
    const at = old.indexOf(NOTES_MARKER);
    if (at >= 0) notes = old.slice(at);
  } catch {
    /* first time */
  }
  fs.writeFileSync(file, `${lines.join('\n')}${notes === '' ? '' : `\n${notes}`}`);
  process.stdout.write('bench/RESULTS.md written\n');
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`run-all failed: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
