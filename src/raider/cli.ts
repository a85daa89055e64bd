/**
 * `raider [flags] -- MISSION`: the built-in raider's one-shot run.
 *
 * Order of checks, so the exit code says what is wrong: usage (2) — flags,
 * prompt, session reference — then configuration (3) — root, engine,
 * packs, permission settings — then the session lock (4). None of these
 * print anything on stdout. Then the run: stream-json events, a `--json`
 * document or the plain answer; exit 0 completed, 1 failed; death by
 * SIGINT (cancelled) or by the interrupting signal (interrupted).
 */
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { missionWordsProblem, parseRaiderArgs, USAGE, type RaiderArgs } from './args.js';
import { canonicalPretty, writeAllSync } from '../protocol/canonical-line.js';
import { loadProjectConfig } from './config/project-config.js';
import { findProvider, providerStorePath } from './config/provider-store.js';
import type { RunDocument } from './document.js';
import { selectEngine } from './engines/select.js';
import { ConfigError, errorMessage, RaiderExit, UsageError } from './errors.js';
import { type Pack, resolvePacks } from './packs/resolve.js';
import { PermissionChannel } from '../protocol/permission-channel.js';
import { PermissionGate } from './permissions/gate.js';
import { loadPermissionSettings, type PermissionSettings } from './permissions/settings.js';
import { systemPrompt } from './prompt.js';
import { performRun } from './run.js';
import { openSession, resolveSessionTarget } from './session.js';
import { RunSignals } from './signals.js';
import { nullSink, StreamJsonWriter } from './stream.js';
import { type HallBinding, hallBinding, hallTools } from './tools/hall.js';
import { defaultTools, toolMap } from './tools/index.js';
import type { Tool } from './tools/tool.js';
import type { Engine } from './engines/engine.js';
import type { PermissionMode } from '../domain/permission.js';
import { ProcessGroups } from './tools/process-groups.js';
import { RAIDER_VERSION } from '../protocol/raider-version.js';
import { endQuietlyWhenStdoutCloses } from '../os/closed-pipe.js';

const STDOUT = 1;
const STDERR = 2;

function say(fd: number, text: string): void {
  writeAllSync(fd, text.endsWith('\n') ? text : `${text}\n`);
}

/**
 * stdout carries only our events or answer; a library printing there (the
 * AI SDK logs with console.info) would corrupt the stream-json protocol.
 */
export function keepStdoutClean(): void {
  const toStderr = (...items: unknown[]): void => console.error(...items);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  // Once each: the SDK repeats a warning on every model call.
  const seen = new Set<string>();
  globalThis.AI_SDK_LOG_WARNINGS = ({ warnings, provider, model }) => {
    for (const w of warnings) {
      const line = `raider: warning from ${provider} ${model}: ${JSON.stringify(w)}`;
      if (!seen.has(line)) say(STDERR, line);
      seen.add(line);
    }
  };
}

export async function runRaiderCli(argv: string[]): Promise<number> {
  endQuietlyWhenStdoutCloses();
  keepStdoutClean();
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
  const wordsProblem = missionWordsProblem(args.loose);
  if (wordsProblem !== null) throw new UsageError(wordsProblem);
  const mission = await readMission(args);
  const root = checkRoot(args.root);
  const target = resolveSessionTarget(args.session, root);
  const setup = await prepareRaider(args, root, warn);
  const { engine, tools, toolEnv, permissions, home } = setup;
  const system = raiderSystemPrompt(setup, root, permissions.mode);

  const { writer, history, sessionRules } = await openSession(target, root, warn);
  const processes = new ProcessGroups();
  const channel = args.permissionChannel === undefined ? undefined : new PermissionChannel(args.permissionChannel, warn);
  const matchRoot = realpathSync(root);

  const signals = new RunSignals();
  signals.install();
  let doc: RunDocument;
  try {
    doc = await performRun({
      engine,
      tools,
      root,
      mission,
      history,
      maxIterations: args.maxIterations,
      signals,
      events: args.machine === 'stream-json' ? new StreamJsonWriter(STDOUT) : nullSink,
      journal: writer,
      system,
      makeGate: (onEvent) =>
        new PermissionGate({
          mode: permissions.mode,
          rules: permissions,
          sessionRules,
          ctx: { root: matchRoot, home },
          asker: channel,
          onEvent,
        }),
      processes,
      toolEnv,
    });
  } finally {
    // Whatever a tool started is gone before we report and exit (docs/raider.md, "Tools").
    await processes.terminateAll();
    channel?.close();
    writer?.close();
  }

  report(args, doc);
  if (doc.status === 'cancelled') return signals.dieBy('INT');
  if (doc.status === 'interrupted') return signals.dieBy(doc.signal ?? 'TERM');
  signals.uninstall();
  return doc.status === 'completed' ? 0 : 1;
}

function warn(message: string): void {
  say(STDERR, message);
}

/** What every run of a raider process shares: the engine, the permission settings, packs and tools. */
export interface RaiderSetup {
  home: string;
  engine: Engine;
  /** The settings of the root, in the mode of --permission-mode (else the configured one). */
  permissions: PermissionSettings;
  packs: readonly Pack[];
  hall: HallBinding | undefined;
  tools: ReadonlyMap<string, Tool>;
  /** The environment tool processes get. */
  toolEnv: NodeJS.ProcessEnv;
}

/** The engine, permissions, packs and tools for ROOT from the flags and the configuration (exit 3 when they are wrong). */
export async function prepareRaider(args: RaiderArgs, root: string, warn: (message: string) => void): Promise<RaiderSetup> {
  const home = homedir();
  const env = process.env;
  const project = loadProjectConfig(root);
  const engine = await selectEngine({
    engine: args.engine,
    provider: args.provider,
    model: args.model,
    options: args.options,
    root,
    env,
    home,
    project,
  });
  const permissions = loadPermissionSettings(root, args.permissionMode);
  for (const w of permissions.warnings) warn(`warning: ${w}`);
  const packs = resolvePacks([...project.packs, ...args.packs], root, home);
  const hall = hallBinding(env);
  const tools = toolMap([...defaultTools().values(), ...(hall ? hallTools(hall) : [])]);
  const toolEnv = scrubSecrets(env, args.provider === undefined ? undefined : findProvider(args.provider, providerStorePath(home)).keyEnv);
  return { home, engine, permissions, packs, hall, tools, toolEnv };
}

/** The system prompt of a run in ROOT in permission mode MODE. */
export function raiderSystemPrompt(setup: RaiderSetup, root: string, mode: PermissionMode): string {
  const { hall } = setup;
  return systemPrompt({
    root,
    mode,
    packs: setup.packs,
    underHall: hall !== undefined,
    ...(hall?.telegram ? { telegramChat: hall.telegram.chatId } : {}),
  });
}

/**
 * The environment of tool processes: the raider's without API keys, so a
 * `bash` call cannot print a key into the model's context and the journal.
 */
export function scrubSecrets(env: NodeJS.ProcessEnv, keyEnv: string | undefined): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (/_API_KEY$/i.test(k) || k === keyEnv) continue;
    out[k] = v;
  }
  return out;
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

export function checkRoot(dir: string | undefined): string {
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
