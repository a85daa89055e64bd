/**
 * `raider [flags] -- MISSION`: the built-in raider's one-shot run.
 *
 * Order of checks, so the exit code says what is wrong: usage (2) — flags,
 * prompt, session reference — then configuration (3) — root, engine,
 * script — then the session lock (4). None of these print anything on
 * stdout. Then the run: stream-json events, a `--json` document or the
 * plain answer; exit 0 completed, 1 failed; death by SIGINT (cancelled) or
 * by the interrupting signal (interrupted).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseRaiderArgs, USAGE, type RaiderArgs } from './args.js';
import { canonicalPretty, writeAllSync } from './canonical.js';
import type { RunDocument } from './document.js';
import { selectEngine } from './engines/select.js';
import { ConfigError, errorMessage, RaiderExit, UsageError } from './errors.js';
import { performRun } from './run.js';
import { openSession, resolveSessionTarget } from './session.js';
import { RunSignals } from './signals.js';
import { nullSink, StreamJsonWriter } from './stream.js';
import { defaultTools } from './tools/index.js';
import { RAIDER_VERSION } from './version.js';

const STDOUT = 1;
const STDERR = 2;

function say(fd: number, text: string): void {
  writeAllSync(fd, text.endsWith('\n') ? text : `${text}\n`);
}

export async function runRaiderCli(argv: string[]): Promise<number> {
  try {
    return await runRaider(argv);
  } catch (err) {
    if (err instanceof RaiderExit) {
      say(STDERR, err.message);
      return err.exitCode;
    }
    say(STDERR, `raider: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}

async function runRaider(argv: string[]): Promise<number> {
  const args = parseRaiderArgs(argv);
  if (args.help) {
    say(STDOUT, USAGE);
    return 0;
  }
  if (args.version) {
    say(STDOUT, `raider ${RAIDER_VERSION}`);
    return 0;
  }
  const mission = await readMission(args);
  const root = checkRoot(args.root);
  const target = resolveSessionTarget(args.session, root);
  const engine = selectEngine({
    engine: args.engine,
    model: args.model,
    options: args.options,
    root,
    env: process.env,
  });
  const warn = (message: string): void => say(STDERR, message);
  const { writer, history } = await openSession(target, root, warn);

  const signals = new RunSignals();
  signals.install();
  let doc: RunDocument;
  try {
    doc = await performRun({
      engine,
      tools: defaultTools(),
      root,
      mission,
      history,
      maxIterations: args.maxIterations,
      signals,
      events: args.machine === 'stream-json' ? new StreamJsonWriter(STDOUT) : nullSink,
      journal: writer,
    });
  } finally {
    writer?.close();
  }

  report(args, doc);
  if (doc.status === 'cancelled') return signals.dieBy('INT');
  if (doc.status === 'interrupted') return signals.dieBy(doc.signal ?? 'TERM');
  signals.uninstall();
  return doc.status === 'completed' ? 0 : 1;
}

/** The mission: the words joined by single spaces, else all of stdin when it is not a terminal. */
async function readMission(args: RaiderArgs): Promise<string> {
  let mission = args.words.join(' ');
  if (args.words.length === 0 && !process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    mission = Buffer.concat(chunks).toString('utf8').trim();
  }
  if (mission.trim() === '') throw new UsageError('No prompt given.');
  return mission;
}

function checkRoot(dir: string | undefined): string {
  const root = resolve(dir ?? process.cwd());
  let isDir = false;
  try {
    isDir = statSync(root).isDirectory();
  } catch (err) {
    throw new ConfigError(`root ${root} cannot be used: ${errorMessage(err)}`);
  }
  if (!isDir) throw new ConfigError(`root ${root} is not a directory`);
  return root;
}

/** What a run leaves besides the stream: the `--json` document, or the plain answer. */
function report(args: RaiderArgs, doc: RunDocument): void {
  if (args.machine === 'json') {
    say(STDOUT, canonicalPretty(doc));
    return;
  }
  if (args.machine === 'stream-json') return;
  if (doc.session) say(STDERR, `session ${doc.session.id} (${doc.session.path})`);
  if (doc.status === 'completed') say(STDOUT, doc.response ?? '');
  else if (doc.status === 'failed') say(STDERR, `raider: run failed: ${doc.error ?? ''}`);
  else say(STDERR, `raider: run ${doc.status}`);
}
