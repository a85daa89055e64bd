/**
 * A warm bridge's wait (`raider acp-client --spare`, docs/agents.md "Warm
 * bridges"): started ahead by the hall with its modules loaded, it says so
 * on its stdin (a socket the hall holds), then waits for one line there, the
 * run handed to it; as it exits at the run's end, it says its exit code
 * there too. Its stdin's end without a hand-over (the hall stopped,
 * died or let it go) or `idle` seconds with nothing end it at once: an
 * unused bridge never outlives its hall.
 */
import fs from 'node:fs';
import net from 'node:net';
import { errorMessage } from '../domain/error-message.js';
import { parseAcpRaiderArgs } from './args.js';
import {
  type BridgeHandOver,
  bridgeHandOverSchema,
  HANDOVER_VERSION,
  SPARE_READY_LINE,
  spareExitLine,
} from '../protocol/bridge-handover.js';

/** The longest hand-over line read: a mission is at most a few MiB. */
const MAX_HANDOVER_BYTES = 64 * 1024 * 1024;

export type SpareWait = { kind: 'run'; handOver: BridgeHandOver } | { kind: 'ended'; why: string };

/**
 * What the run's first steps use for the first time, used once while the
 * bridge waits: the first `performance` call loads perf_hooks, and the
 * hand-over and the run's arguments are parsed as theirs will be (zod and
 * parseArgs each do work on a first use). A run handed over then does not
 * pay for them (docs/agents.md, "Warm bridges").
 */
export function warmUp(): void {
  performance.now();
  parseAcpRaiderArgs(['--stream-json', '--agent-command', 'warm-up', '--', 'warm-up'], process.cwd());
  parseHandOver(
    JSON.stringify({
      version: HANDOVER_VERSION,
      run_id: 'warm-up',
      argv: [],
      env: {},
      cwd: '/',
      events_path: '/dev/null',
      stderr_path: '/dev/null',
    }),
  );
}

export function awaitHandOver(idleMs: number): Promise<SpareWait> {
  return new Promise((resolve) => {
    const input = process.stdin;
    let text = '';
    let settled = false;
    const done = (wait: SpareWait) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      input.pause();
      input.removeAllListeners('data');
      input.removeAllListeners('end');
      // A socket (the hall's) is kept open, unread, for the word at the run's end (sayExit), holding
      // nothing up; anything else (a file, a pipe of a bridge started by hand) has nobody to hear it.
      if (wait.kind === 'run' && input instanceof net.Socket) input.unref();
      else input.destroy();
      resolve(wait);
    };
    const timer = setTimeout(() => done({ kind: 'ended', why: `no run within ${idleMs / 1000} s` }), idleMs);
    input.setEncoding('utf8');
    input.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end < 0) {
        if (text.length > MAX_HANDOVER_BYTES) done({ kind: 'ended', why: 'the hand-over line is too long' });
        return;
      }
      done(parseHandOver(text.slice(0, end)));
    });
    input.on('end', () => done({ kind: 'ended', why: 'stdin ended without a hand-over' }));
    input.on('error', (err) => done({ kind: 'ended', why: `stdin: ${errorMessage(err)}` }));
    sayReady();
  });
}

function parseHandOver(line: string): SpareWait {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { kind: 'ended', why: `the hand-over is not JSON: ${errorMessage(err)}` };
  }
  const parsed = bridgeHandOverSchema.safeParse(value);
  if (!parsed.success) return { kind: 'ended', why: `the hand-over is not one: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
  return { kind: 'run', handOver: parsed.data };
}

/** On the stdin socket the hall holds; stdin that cannot be written (a pipe, a terminal) simply hears nothing. */
function sayReady(): void {
  say(SPARE_READY_LINE);
}

/** The run's end, as its exit code, said as the bridge exits: the hall need not wait for the exit itself. */
export function sayExit(code: number): void {
  say(spareExitLine(code));
}

function say(line: string): void {
  try {
    fs.writeSync(0, line);
  } catch {
    // Not a socket, or its hall is gone: nobody waits for the word.
  }
}
