/**
 * Worktree runs (docs/worktrees.md) on a repository of 10,000 files.
 *
 *   start -- a worktree raider's run through a real hall (the built CLI, the
 *            minimal raider): a `spawn` frame, timed to its reply and to its
 *            `raider.spawned` on a subscription; each run ends (its worktree
 *            removed, its branch deleted: it changed nothing) before the next.
 *   bare  -- `git worktree add -b BRANCH DIR HEAD` of the same repository,
 *            timed alone (removed untimed after), interleaved with the hall's
 *            runs so noise hits both.
 *   Target: hall spawn → raider.spawned median <= 1.5x the bare add.
 *
 * Then 20 worktree runs are spawned at once while another connection asks
 * `status` in a closed loop until every one has its `raider.spawned`: the
 * hall's other replies while git makes 20 worktrees (target: p99 <= 5 ms),
 * against the same loop on the idle hall before.
 *
 *   node --import tsx bench/worktrees.ts [--quick] [--n N] [--files N]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  argNumber,
  Client,
  count,
  fmt,
  machine,
  nowMs,
  quantile,
  runMain,
  STATS_HEADERS,
  startHall,
  stats,
  statsRow,
  Subscription,
  summary,
  table,
  tempRoot,
  writeMinimalRaider,
} from './lib.js';

const TARGET_RATIO = 1.5;
const TARGET_STATUS_P99_MS = 5;
const PARALLEL_STARTS = 20;
/** Twenty worktrees of 10,000 files, made and removed one after another, take minutes on a loaded machine. */
const LONG_MS = 30 * 60_000;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A repository of `files` small files in 100 directories, one commit; the hall's own files ignored. */
function makeRepository(root: string, files: number): void {
  git(root, 'init', '--quiet', '--initial-branch=main');
  fs.writeFileSync(path.join(root, '.gitignore'), '.raider-hall*\n.raider/\n');
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, 'src', `d${i % 100}`);
    if (i < 100) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n${'x'.repeat(200)}\n`);
  }
  git(root, 'add', '.');
  git(root, '-c', 'user.name=Bench', '-c', 'user.email=bench@localhost', 'commit', '--quiet', '-m', 'ten thousand files');
}

/** Status round trips in a closed loop on `client` until `until()` is true; each in ms. */
async function statusLoop(client: Client, until: () => boolean, min = 0): Promise<number[]> {
  const times: number[] = [];
  while (!until() || times.length < min) {
    const t0 = nowMs();
    const reply = await client.command({ cmd: 'status' });
    times.push(nowMs() - t0);
    if (reply.error !== undefined) throw new Error(`status answered ${JSON.stringify(reply)}`);
  }
  return times;
}

function p99(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.99,
  );
}

runMain(async () => {
  const n = argNumber('--n') ?? count(20, 5);
  const files = argNumber('--files') ?? 10_000;
  console.log(`# worktrees: ${files} files, ${n} runs each side, then ${PARALLEL_STARTS} at once; ${machine()}`);

  const root = tempRoot('worktrees');
  const t0 = nowMs();
  makeRepository(root, files);
  console.log(`repository made in ${fmt(nowMs() - t0, 0)} ms`);
  fs.writeFileSync(path.join(root, '.raider-hall.yml'), 'raiders: { bench: { worktree: true } }\n');
  const raider = writeMinimalRaider(tempRoot('worktrees-raider'));
  const bareDir = tempRoot('worktrees-bare');

  const { hall, readyMs } = await startHall(root, raider);
  console.log(`hall answered ${fmt(readyMs, 0)} ms after start`);
  const sub = await Subscription.open(hall.socket, 'raider.');
  const client = await Client.connect(hall.socket);

  let bareSeq = 0;
  const bareOnce = (): number => {
    const dir = path.join(bareDir, `w${bareSeq}`);
    const branch = `bare/${bareSeq++}`;
    const a = nowMs();
    git(root, 'worktree', 'add', '--quiet', '--no-track', '-b', branch, dir, 'HEAD');
    const ms = nowMs() - a;
    git(root, 'worktree', 'remove', '--force', dir);
    git(root, 'branch', '-D', '--quiet', branch);
    return ms;
  };
  const hallOnce = async (): Promise<{ spawned: number; reply: number }> => {
    const a = nowMs();
    const reply = await client.command({ cmd: 'spawn', name: 'bench', mission: 'go' });
    const tReply = nowMs();
    if (typeof reply.id !== 'string') throw new Error(`spawn answered ${JSON.stringify(reply)}`);
    const { at } = await sub.spawned(reply.id);
    const { event } = await sub.done(reply.id);
    if (event.status !== 'completed' || event.worktree_kept !== false || event.branch !== `raider/${reply.id}`)
      throw new Error(`run ended ${JSON.stringify(event)}`);
    return { spawned: at - a, reply: tReply - a };
  };

  // One of each unmeasured: git's and the hall's first touch of the repository.
  bareOnce();
  await hallOnce();
  const bare: number[] = [];
  const spawned: number[] = [];
  const replied: number[] = [];
  for (let i = 0; i < n; i++) {
    const first = i % 2 === 0;
    if (first) bare.push(bareOnce());
    const h = await hallOnce();
    spawned.push(h.spawned);
    replied.push(h.reply);
    if (!first) bare.push(bareOnce());
    console.log(`pair ${i + 1}/${n}: bare add ${fmt(bare.at(-1) ?? NaN, 0)} ms, hall spawn → raider.spawned ${fmt(h.spawned, 0)} ms`);
  }

  // Printed now: a slow machine may not see the end of the second part.
  const sb = stats(bare);
  const ss = stats(spawned);
  const ratio = ss.median / sb.median;
  console.log('');
  console.log(
    table(STATS_HEADERS, [
      statsRow('bare git worktree add (ms)', sb),
      statsRow('hall spawn → reply (ms)', stats(replied)),
      statsRow('hall spawn → raider.spawned (ms)', ss),
    ]),
  );
  console.log(machine());
  summary([
    {
      bench: 'worktrees',
      metric: `bare git worktree add, ${files} files: median / p90 (ms), n=${n}`,
      value: `${fmt(sb.median)} / ${fmt(sb.p90)}`,
    },
    {
      bench: 'worktrees',
      metric: 'hall spawn → raider.spawned, worktree run: median / p90 (ms)',
      value: `${fmt(ss.median)} / ${fmt(ss.p90)} (${fmt(ratio)}x bare)`,
      target: `<= ${TARGET_RATIO}x`,
      met: ratio <= TARGET_RATIO,
    },
  ]);

  // The hall's other replies: idle first, then while 20 worktree runs start.
  const statusClient = await Client.connect(hall.socket);
  const idleEnd = nowMs() + 2000;
  const idle = await statusLoop(statusClient, () => nowMs() > idleEnd);
  const ids: string[] = [];
  let allSpawned = false;
  const startsAt = nowMs();
  const starts = client
    .pipeline(Array.from({ length: PARALLEL_STARTS }, () => ({ cmd: 'spawn', name: 'bench', mission: 'go' })))
    .then(async (replies) => {
      for (const r of replies) {
        if (typeof r.id !== 'string') throw new Error(`spawn answered ${JSON.stringify(r)}`);
        ids.push(r.id);
      }
      await Promise.all(ids.map((id) => sub.spawned(id, LONG_MS)));
      allSpawned = true;
    });
  const during = await statusLoop(statusClient, () => allSpawned);
  await starts;
  const startsMs = nowMs() - startsAt;
  const si = stats(idle);
  const sd = stats(during);
  console.log('');
  console.log(
    table(STATS_HEADERS, [statsRow('status, idle hall (ms)', si), statsRow(`status during ${PARALLEL_STARTS} worktree starts (ms)`, sd)]),
  );
  console.log(
    `status p99 idle ${fmt(p99(idle))} ms, during starts ${fmt(p99(during))} ms; the ${PARALLEL_STARTS} starts took ${fmt(startsMs, 0)} ms`,
  );
  console.log(machine());
  summary([
    {
      bench: 'worktrees',
      metric: `status p99 (ms): idle → during ${PARALLEL_STARTS} worktree starts (n=${si.n} → ${sd.n})`,
      value: `${fmt(p99(idle))} → ${fmt(p99(during))}`,
      target: `<= ${TARGET_STATUS_P99_MS} ms`,
      met: p99(during) <= TARGET_STATUS_P99_MS,
    },
  ]);

  // Every run ends and takes its worktree with it (each changed nothing).
  const endsAt = nowMs();
  await Promise.all(ids.map((id) => sub.done(id, LONG_MS)));
  const leftover =
    git(root, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree ')).length - 1;
  console.log(`the ${PARALLEL_STARTS} runs ended ${fmt(nowMs() - endsAt, 0)} ms after the last start; worktrees left: ${leftover}`);
  statusClient.close();
  client.close();
  sub.close();
  await hall.stop();
});
