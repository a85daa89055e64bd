/**
 * Shared test plumbing: build the package once (serialised across test
 * files by a flock, so no file runs the raider while another rewrites
 * dist/), spawn the real `bin/raider`, and make throwaway project roots.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tryLockExclusive } from '../../src/raider/lock.js';

export const PROJECT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(PROJECT, 'bin', 'raider');
const BUILT = join(PROJECT, 'dist', 'raider', 'cli.js');
const MAIN_SRC = join(PROJECT, 'src', 'cli', 'main.ts');
const MAIN_BUILT = join(PROJECT, 'dist', 'cli', 'main.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** dist/ is fresh when it is newer than the raider's sources and the entry that loads it. */
function isFresh(): boolean {
  try {
    const newest = Math.max(newestMtime(join(PROJECT, 'src', 'raider')), statSync(MAIN_SRC).mtimeMs);
    return statSync(BUILT).mtimeMs >= newest && statSync(MAIN_BUILT).mtimeMs >= newest;
  } catch {
    return false;
  }
}

/** Build dist/ unless it is newer than every source file. */
export async function ensureBuilt(): Promise<void> {
  const lockFile = join(tmpdir(), `raider-test-build-${Buffer.from(PROJECT).toString('hex').slice(-32)}.lock`);
  for (;;) {
    const lock = await tryLockExclusive(lockFile);
    if (!lock) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      if (!isFresh()) {
        try {
          execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: PROJECT, stdio: 'pipe' });
        } catch {
          // tsc emits even when files outside src/raider do not compile yet;
          // what matters is that the raider's own output is there.
        }
        if (!isFresh()) throw new Error('build failed: dist/raider/cli.js was not written');
      }
      return;
    } finally {
      lock.release();
    }
  }
}

/** A HOME of our own, so the user's ~/.raider (providers, packs) never leaks into a test. */
let emptyHome: string | undefined;
export function testHome(): string {
  emptyHome ??= mkdtempSync(join(tmpdir(), 'raider-home-'));
  return emptyHome;
}

/** An environment without anything that would choose an engine, a script, a provider or a hall for the raider. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/_API_KEY$|^(OPENAI|ANTHROPIC)_BASE_URL$|^RAIDER_(SCRIPT|HALL_.*)$/.test(key)) delete env[key];
  }
  return { ...env, HOME: testHome(), ...extra };
}

/** Every child a test started, so a failed assertion leaves none running. */
const children = new Set<ChildProcess>();

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.on('close', () => children.delete(child));
  return child;
}

/** Project roots made by makeProject, removed after the file's tests. */
const projects: string[] = [];

/** For afterAll: SIGKILL whatever a test started and did not see end, and remove its projects. */
export async function cleanUp(): Promise<void> {
  await Promise.all([...children].map((c) => killAndWait(c)));
  for (const root of projects.splice(0)) rmSync(root, { recursive: true, force: true });
  if (emptyHome) rmSync(emptyHome, { recursive: true, force: true });
  emptyHome = undefined;
}

export interface RaiderResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Start the real raider with stdin at /dev/null, as the hall does. */
export function startRaider(args: readonly string[], opts: SpawnOptions = {}): { child: ChildProcess; done: Promise<RaiderResult> } {
  const child = track(
    spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? PROJECT,
      env: opts.env ?? cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<RaiderResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

export function runRaider(args: readonly string[], opts: SpawnOptions = {}): Promise<RaiderResult> {
  return startRaider(args, opts).done;
}

/** Resolves once the child's stdout has printed a line containing `needle`. */
export function waitForOutput(child: ChildProcess, needle: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${needle}; saw: ${seen}`)), timeoutMs);
    child.stdout!.on('data', (d: Buffer | string) => {
      seen += String(d);
      if (seen.includes(needle)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

export interface StreamEvent {
  type: string;
  seq: number;
  time: number;
  version: number;
  [field: string]: unknown;
}

export function parseEvents(stdout: string): StreamEvent[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as StreamEvent);
}

/** The events' types in order, a `run.state` with its state: `run.state(running)`. */
export function eventTypes(events: readonly StreamEvent[]): string[] {
  return events.map((e) => (e.type === 'run.state' ? `run.state(${String(e.state)})` : e.type));
}

/** The `eventTypes` of a run that ends in `state`, with `middle` between its start and its end. */
export function runTypes(state: string, ...middle: string[]): string[] {
  return ['run.started', 'run.state(running)', ...middle, `run.state(${state})`, 'run.finished'];
}

/** A fresh project root with `.raider/script.yml` (when given) and extra files. */
export function makeProject(script?: string, files: Record<string, string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'raider-test-'));
  projects.push(root);
  if (script !== undefined) {
    mkdirSync(join(root, '.raider'), { recursive: true });
    writeFileSync(join(root, '.raider', 'script.yml'), script);
  }
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  return root;
}

/** A child that holds `file` with a real flock(2) (util-linux flock), until killed. */
export async function holdFlock(file: string, how: 'flock' | 'perl' = 'flock'): Promise<ChildProcess> {
  const child = track(
    how === 'flock'
      ? spawn('flock', ['--nonblock', '--no-fork', file, 'sh', '-c', 'echo locked; exec sleep 60'], {
          stdio: ['ignore', 'pipe', 'inherit'],
        })
      : spawn(
          'perl',
          [
            '-MFcntl=:flock',
            '-e',
            'open(my $f, ">>", $ARGV[0]) or die; flock($f, LOCK_EX|LOCK_NB) or die "busy"; $|=1; print "locked\\n"; sleep 60',
            file,
          ],
          { stdio: ['ignore', 'pipe', 'inherit'] },
        ),
  );
  await waitForOutput(child, 'locked');
  return child;
}

export function killAndWait(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('close', () => resolve());
    child.kill(signal);
  });
}
