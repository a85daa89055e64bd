/**
 * The memory a hall holds: the hall and its fork server, idle with no face
 * configured and with 50 raiders running, next to an idle bare Node process
 * (the floor: what any Node program holds before it does anything).
 *
 * Two measures per process, from /proc/PID/smaps_rollup:
 * - RSS counts every resident page, the pages of the node binary and its
 *   libraries that both processes share with each other (and with every
 *   other Node process) included, so RSS added up over a tree counts them
 *   twice;
 * - PSS splits each shared page between the processes that map it: the PSS
 *   of the tree is what the tree costs the machine.
 * Target (issue 15): hall tree idle <= 80 MiB with no face configured.
 *
 *   node --import tsx bench/memory.ts [--quick] [--raiders N]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import {
  argNumber,
  Client,
  count,
  fmt,
  machine,
  runMain,
  sleep,
  startHall,
  summary,
  table,
  tempRoot,
  writeWaitingRaider,
  type Json,
} from './lib.js';

const TARGET_IDLE_MIB = 80;
/** Long enough for start-up garbage to be collected and the heap to settle. */
const SETTLE_MS = 2000;

interface Memory {
  rss: number;
  pss: number;
  /** Pages nobody else maps: what the process adds to the machine on its own. */
  privateDirty: number;
}

function memoryOf(pid: number): Memory {
  const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
    return m ? Number(m[1]) / 1024 : Number.NaN;
  };
  return { rss: kib('Rss'), pss: kib('Pss'), privateDirty: kib('Private_Dirty') };
}

function add(a: Memory, b: Memory): Memory {
  return { rss: a.rss + b.rss, pss: a.pss + b.pss, privateDirty: a.privateDirty + b.privateDirty };
}

/** The hall's direct children that are its fork server (raiders are the fork server's children). */
function forkServerOf(hallPid: number): number {
  const children = fs.readFileSync(`/proc/${hallPid}/task/${hallPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  for (const child of children) {
    const cmdline = fs.readFileSync(`/proc/${child}/cmdline`, 'utf8');
    if (cmdline.includes('raider-spawner')) return Number(child);
  }
  throw new Error(`no fork server under hall ${hallPid}`);
}

async function bareNode(): Promise<Memory> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await sleep(SETTLE_MS);
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start a bare node process');
  const memory = memoryOf(pid);
  child.kill('SIGKILL');
  return memory;
}

function row(label: string, m: Memory): string[] {
  return [label, fmt(m.rss, 1), fmt(m.pss, 1), fmt(m.privateDirty, 1)];
}

runMain(async () => {
  const raiders = argNumber('--raiders') ?? count(50, 20);
  console.log(`# memory: the hall tree idle and with ${raiders} running, ${machine()}`);

  const floor = await bareNode();
  const root = tempRoot('memory');
  const raider = writeWaitingRaider(tempRoot('memory-bin'));
  const { hall } = await startHall(root, raider);
  const hallPid = hall.child.pid;
  if (hallPid === undefined) throw new Error('the hall has no pid');
  await sleep(SETTLE_MS);
  const forkPid = forkServerOf(hallPid);
  const idleHall = memoryOf(hallPid);
  const idleFork = memoryOf(forkPid);
  const idleTree = add(idleHall, idleFork);

  const client = await Client.connect(hall.socket);
  const replies = await client.pipeline(Array.from({ length: raiders }, (): Json => ({ cmd: 'spawn', name: 'mem', mission: 'wait 600' })));
  client.close();
  const failed = replies.filter((r) => typeof r.pid !== 'number');
  if (failed.length > 0) throw new Error(`${failed.length} spawns failed, e.g. ${JSON.stringify(failed[0])}`);
  await sleep(SETTLE_MS);
  const busyHall = memoryOf(hallPid);
  const busyFork = memoryOf(forkPid);
  const busyTree = add(busyHall, busyFork);
  await hall.stop(30_000);

  console.log('');
  console.log(
    table(
      ['MiB', 'RSS', 'PSS', 'private dirty'],
      [
        row('bare node, idle (floor)', floor),
        row('hall, idle', idleHall),
        row('fork server, idle', idleFork),
        row('hall tree, idle', idleTree),
        row(`hall, ${raiders} running`, busyHall),
        row(`fork server, ${raiders} running`, busyFork),
        row(`hall tree, ${raiders} running`, busyTree),
      ],
    ),
  );
  const met = idleTree.pss <= TARGET_IDLE_MIB;
  console.log('');
  console.log(
    `hall tree idle: PSS ${fmt(idleTree.pss, 1)} MiB (RSS added up ${fmt(idleTree.rss, 1)}), ` +
      `${fmt(idleTree.pss / floor.pss, 2)}x a bare node's PSS; target <= ${TARGET_IDLE_MIB} MiB: ${met ? 'met' : 'MISSED'}`,
  );
  summary([
    {
      bench: 'memory',
      metric: 'hall tree idle, no face: PSS / RSS added up (MiB); bare node PSS',
      value: `${fmt(idleTree.pss, 1)} / ${fmt(idleTree.rss, 1)}; ${fmt(floor.pss, 1)}`,
      target: `<= ${TARGET_IDLE_MIB} MiB PSS`,
      met,
    },
    {
      bench: 'memory',
      metric: `hall tree with ${raiders} running: PSS / RSS added up (MiB)`,
      value: `${fmt(busyTree.pss, 1)} / ${fmt(busyTree.rss, 1)}`,
    },
  ]);
});
