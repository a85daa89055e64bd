/**
 * The arguments of `raider hall spawn [DIR] NAME MISSION...`. The mission is
 * the words after NAME, or stdin when none follow and stdin is not a
 * terminal, or when the only word is `-`: the way to hand over a mission
 * longer than the shell lets one argument be.
 */
import { MISSION_MAX_BYTES, missionSizeProblem } from '../../domain/mission.js';
import { dirThen, UsageError } from './dir-args.js';

export const SPAWN_USAGE = 'Usage: raider hall spawn NAME MISSION [--attach]';

export interface SpawnArgs {
  dir: string;
  name: string;
  mission: string;
}

/** What a mission is read from: process.stdin, or a stream a test gives. */
export type MissionInput = AsyncIterable<Buffer | string> & { readonly isTTY?: boolean };

export async function spawnArgs(args: readonly string[], stdin: MissionInput = process.stdin): Promise<SpawnArgs> {
  const { dir, rest } = dirThen(args, 2);
  const [name, ...words] = rest;
  if (name === undefined) throw new UsageError(SPAWN_USAGE);
  const lone = words.length === 1 && words[0] === '-';
  if (words.length > 0 && !lone) return { dir, name, mission: words.join(' ') };
  // No words at a terminal: a forgotten mission, not one about to be typed.
  if (!lone && stdin.isTTY === true) throw new UsageError(SPAWN_USAGE);
  return { dir, name, mission: await readMission(stdin) };
}

/** A final line break, as `echo` and editors leave it: 2 for CRLF, 1 for LF, else 0. */
function lineBreakAtEnd(tail: Buffer): number {
  if (tail.at(-1) !== 0x0a) return 0;
  return tail.at(-2) === 0x0d ? 2 : 1;
}

/**
 * All of stdin, less one final line break. Only what could still be a
 * mission is kept in memory; a longer input is counted to its end and refused
 * here with the hall's own words (see missionSizeProblem), as the hall
 * refuses a long mission given as an argument; an empty one goes to the hall,
 * which refuses it as it does every empty mission.
 */
async function readMission(stdin: MissionInput): Promise<string> {
  const keep = MISSION_MAX_BYTES + 2;
  const kept: Buffer[] = [];
  let total = 0;
  let tail = Buffer.alloc(0);
  for await (const chunk of stdin) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += bytes.length;
    if (total <= keep) kept.push(bytes);
    else kept.length = 0;
    tail = Buffer.concat([tail, bytes.subarray(-2)]).subarray(-2);
  }
  const size = total - lineBreakAtEnd(tail);
  const problem = missionSizeProblem(size);
  if (problem !== null) throw new Error(problem);
  return Buffer.concat(kept).subarray(0, size).toString('utf8');
}
