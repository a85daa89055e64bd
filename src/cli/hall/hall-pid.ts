/**
 * Whether the pid in a root's pid file is that root's hall. The file can
 * outlive its hall (kill -9, a crash, a reboot) and its pid can then belong
 * to any process, so `stop` signals only a process whose command line is a
 * hall started for this root (`hall start [DIR]` or `demo [DIR]`, DIR
 * resolved against the process's working directory). Where /proc cannot
 * tell, a hall that answers on the root's socket vouches for the pid.
 */
import fs from 'node:fs';
import path from 'node:path';
import { processAlive } from '../../adapters/os/process-alive.js';
import { socketAnswers } from '../../adapters/os/unix-socket.js';
import type { HallPaths } from '../../ports/hall-paths.js';

export type HallPid =
  | { kind: 'none' }
  | { kind: 'invalid'; text: string }
  /** The file names a process that is gone (a hall killed with -9, a crash) or is not this root's hall. */
  | { kind: 'stale'; pid: number; text: string; reason: 'gone' | 'not_this_hall' }
  | { kind: 'ours'; pid: number };

/** Options of `hall start` that take a value: the word after them is not DIR. */
const VALUE_OPTIONS = new Set(['--acp-port', '--acp-host']);

/** The root a `raider hall start` or `raider demo` command line runs, or null when it is neither. */
export function hallRootOfArgv(argv: readonly string[], cwd: string): string | null {
  const hallAt = argv.findIndex((word, i) => word === 'hall' && argv[i + 1] === 'start');
  const demoAt = hallAt >= 0 ? -1 : argv.indexOf('demo');
  if (hallAt < 0 && demoAt < 0) return null;
  const rest = argv.slice(hallAt >= 0 ? hallAt + 2 : demoAt + 1);
  let dir: string | undefined;
  for (let i = 0; i < rest.length && dir === undefined; i++) {
    const word = rest[i] ?? '';
    if (VALUE_OPTIONS.has(word)) i++;
    else if (!word.startsWith('-')) dir = word;
  }
  return path.resolve(cwd, dir ?? (hallAt >= 0 ? '.' : 'demo-hall'));
}

function realOrSame(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** The process's argv and working directory from /proc, or null where /proc cannot tell. */
function procCommand(pid: number): { argv: string[]; cwd: string } | null {
  try {
    const argv = fs
      .readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((w) => w !== '');
    return { argv, cwd: fs.readlinkSync(`/proc/${pid}/cwd`) };
  } catch {
    return null;
  }
}

export async function readHallPid(paths: HallPaths): Promise<HallPid> {
  let text: string;
  try {
    text = fs.readFileSync(paths.pidFile, 'utf8');
  } catch {
    return { kind: 'none' };
  }
  if (!/^\d+\s*$/.test(text)) return { kind: 'invalid', text };
  const pid = Number(text.trim());
  if (!processAlive(pid)) return { kind: 'stale', pid, text, reason: 'gone' };
  const notOurs: HallPid = { kind: 'stale', pid, text, reason: 'not_this_hall' };
  const command = procCommand(pid);
  if (command === null) return (await socketAnswers(paths.socket)) ? { kind: 'ours', pid } : notOurs;
  const root = hallRootOfArgv(command.argv, command.cwd);
  return root !== null && realOrSame(root) === realOrSame(paths.root) ? { kind: 'ours', pid } : notOurs;
}

/** Removes a stale pid file, unless a hall that started meanwhile has written its own. */
export function removeStalePidFile(paths: HallPaths, text: string): void {
  try {
    if (fs.readFileSync(paths.pidFile, 'utf8') === text) fs.rmSync(paths.pidFile, { force: true });
  } catch {
    /* already gone */
  }
}
