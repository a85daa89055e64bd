/** `raider hall start` (foreground or --daemon) and `raider hall stop`. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { processAlive } from '../../adapters/os/process-alive.js';
import { hallPaths } from '../../adapters/storage/hall-paths.js';
import { defaultAdapters } from '../../actors/default-adapters.js';
import { HallStartError, startHall, type InspectionObserver, type RunningHall } from '../../actors/hall-supervisor.js';
import type { HallStartFlags } from '../../ports/hall-services.js';
import { renderBusEvent, styleFor } from './render.js';
import { socketAnswers } from '../../adapters/os/unix-socket.js';

export interface StartOptions {
  dir: string;
  daemon: boolean;
  quiet: boolean;
  acpPort?: number;
  acpHost?: string;
  /** true: a local Stately relay; a string: the inspector's WebSocket URL. */
  inspect?: string | boolean;
}

const READY_TIMEOUT_MS = 15_000;

export async function startCommand(options: StartOptions): Promise<number> {
  return options.daemon ? startDaemon(options) : startForeground(options);
}

async function startForeground(options: StartOptions): Promise<number> {
  const style = styleFor(process.stdout);
  // Signals are ours from the start: one that arrives while the hall comes up stops it once it is up.
  let hall: RunningHall | null = null;
  let signals = 0;
  const onSignal = () => {
    signals++;
    // A second Ctrl-C while stopping means: now.
    if (signals > 1) process.exit(130);
    hall?.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const inspector = options.inspect !== undefined ? await statelyInspector(options.inspect) : null;
  try {
    hall = await startHall({
      root: options.dir,
      adapters: defaultAdapters,
      flags: acpFlags(options),
      ...(inspector ? { inspect: inspector.observer } : {}),
      ...(options.quiet ? {} : { onEvent: (event) => process.stdout.write(`${renderBusEvent(event, style)}\n`) }),
    });
  } catch (err) {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    inspector?.stop();
    if (err instanceof HallStartError) {
      process.stderr.write(`${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`Hall error: ${(err as Error).message}\n`);
    return 1;
  }
  if (!options.quiet) {
    process.stderr.write(`Hall running in ${hall.paths.root} (PID ${process.pid}); socket ${hall.paths.socket}. Stop with Ctrl-C or: raider hall stop\n`);
  }
  if (signals > 0) hall.stop();
  const code = await hall.stopped;
  inspector?.stop();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  // A hall that failed may hold handles of its broken actors: leave now, for the service manager to restart it.
  if (code !== 0) process.exit(code);
  return 0;
}

function acpFlags(options: StartOptions): HallStartFlags {
  return {
    ...(options.acpPort !== undefined ? { acpPort: options.acpPort } : {}),
    ...(options.acpHost !== undefined ? { acpHost: options.acpHost } : {}),
  };
}

/** The same flags for the daemon's own `raider hall start`. */
function acpArgs(options: StartOptions): string[] {
  return [
    ...(options.acpPort !== undefined ? ['--acp-port', String(options.acpPort)] : []),
    ...(options.acpHost !== undefined ? ['--acp-host', options.acpHost] : []),
  ];
}

/**
 * The Stately inspector (`start --inspect`): a WebSocket inspector, with a
 * local relay on port 8080 when no URL is given. Its page embeds the Stately
 * UI, so the browser needs the internet; `raider hall inspect` works offline.
 */
async function statelyInspector(target: string | boolean): Promise<{ observer: InspectionObserver; stop(): void }> {
  const { createWebSocketInspector } = await import('@statelyai/inspect');
  let relay: { stop(): void } | null = null;
  let url = typeof target === 'string' ? target : '';
  if (url === '') {
    const { createInspectorServer } = await import('@statelyai/inspect/server');
    relay = createInspectorServer({ port: 8080, autoOpen: false });
    url = 'ws://localhost:8080';
    process.stderr.write('Stately inspector: open http://localhost:8080 in a browser (its page loads https://stately.ai/inspect)\n');
  }
  const inspector = createWebSocketInspector({ url });
  return {
    observer: (event) => inspector.inspect.next?.(event),
    stop: () => {
      inspector.stop();
      relay?.stop();
    },
  };
}


/** Starts the hall as a detached process logging to .raider-hall/hall.log, and waits until it answers. */
async function startDaemon(options: StartOptions): Promise<number> {
  const paths = hallPaths(options.dir);
  fs.mkdirSync(`${paths.root}/.raider-hall`, { recursive: true });
  const logFd = fs.openSync(paths.hallLog, 'a');
  const logStart = fs.fstatSync(logFd).size;
  const bin = fileURLToPath(new URL('../../../bin/raider', import.meta.url));
  const inspectArgs = options.inspect === undefined ? [] : typeof options.inspect === 'string' ? ['--inspect', options.inspect] : ['--inspect'];
  const child = spawn(process.execPath, [bin, 'hall', 'start', paths.root, '--quiet', ...acpArgs(options), ...inspectArgs], {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: process.env,
  });
  fs.closeSync(logFd);
  let exitCode: number | null = null;
  child.on('exit', (code) => (exitCode = code ?? 1));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exitCode !== null) {
      const log = fs.readFileSync(paths.hallLog, 'utf8').slice(logStart).trim();
      process.stderr.write(`${log || `the hall exited with code ${exitCode}`}\n`);
      return exitCode === 0 ? 1 : exitCode;
    }
    const pid = fs.existsSync(paths.pidFile) ? fs.readFileSync(paths.pidFile, 'utf8').trim() : '';
    if (pid === String(child.pid) && (await socketAnswers(paths.socket))) {
      child.unref();
      process.stdout.write(`Hall started with PID ${child.pid}\n`);
      return 0;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  process.stderr.write(`The hall did not come up within ${READY_TIMEOUT_MS / 1000} s; see ${paths.hallLog}\n`);
  return 1;
}

const STOP_TIMEOUT_MS = 20_000;

export async function stopCommand(dir: string, wait: boolean): Promise<number> {
  const paths = hallPaths(dir);
  if (!fs.existsSync(paths.pidFile)) {
    process.stderr.write('No PID file found. Is the hall running?\n');
    return 1;
  }
  const text = fs.readFileSync(paths.pidFile, 'utf8').trim();
  if (!/^\d+$/.test(text)) {
    process.stderr.write('Invalid PID file\n');
    return 1;
  }
  const pid = Number(text);
  try {
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    process.stderr.write(`Failed to send TERM to ${pid}: ${(err as Error).message}\n`);
    return 1;
  }
  process.stdout.write(`Sent TERM to hall PID ${pid}\n`);
  if (!wait) return 0;
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (processAlive(pid)) {
    if (Date.now() > deadline) {
      process.stderr.write(`The hall (PID ${pid}) has not stopped after ${STOP_TIMEOUT_MS / 1000} s\n`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return 0;
}
