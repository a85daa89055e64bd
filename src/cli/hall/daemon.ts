/** `raider hall start` (foreground or --daemon); `raider hall stop` is in stop.ts. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hallPaths } from '../../ports/hall-paths.js';
import { defaultAdapters } from '../../actors/default-adapters.js';
import { HallStartError, startHall, type InspectionObserver, type RunningHall } from '../../actors/hall-supervisor.js';
import type { HallStartFlags } from '../../ports/hall-services.js';
import { renderBusEvent, styleFor } from './render.js';
import { DaemonReport, daemonReporter } from './daemon-report.js';
import { errorMessage } from '../../domain/error-message.js';
import { limitHeapGrowth } from '../../adapters/os/heap-growth.js';
import { definedFields } from '../../domain/defined-fields.js';

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
  // Started by `start --daemon`: the start-up is reported to the starter, not to the log.
  const reporter = daemonReporter();
  // This process is the hall from here on: its heap is tuned for a hall.
  limitHeapGrowth((message) => (reporter ? reporter.log(message) : process.stderr.write(`${message}\n`)));
  try {
    hall = await startHall({
      root: options.dir,
      adapters: defaultAdapters,
      ...(reporter ? { log: (line: string) => reporter.log(line) } : {}),
      flags: acpFlags(options),
      ...(inspector ? { inspect: inspector.observer } : {}),
      ...(options.quiet ? {} : { onEvent: (event) => process.stdout.write(`${renderBusEvent(event, style)}\n`) }),
    });
  } catch (err) {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    inspector?.stop();
    const [message, code] = err instanceof HallStartError ? [err.message, err.exitCode] : [`Hall error: ${errorText(err)}`, 1];
    if (reporter) await reporter.failed(message, code);
    else process.stderr.write(`${message}\n`);
    // The inspector's client and relay (the library's) may hold sockets and timers after their stop.
    if (inspector) process.exit(code);
    return code;
  }
  if (!options.quiet) {
    // A daemon's stderr is its hall.log, read by someone with no Ctrl-C to press.
    const stop = reporter ? `Stop it with: raider hall stop ${hall.paths.root}` : 'Stop with Ctrl-C or: raider hall stop';
    process.stderr.write(`Hall running in ${hall.paths.root} (PID ${process.pid}); socket ${hall.paths.socket}. ${stop}\n`);
  }
  await reporter?.ready(hall.faceErrors);
  if (signals > 0) hall.stop();
  const code = await hall.stopped;
  inspector?.stop();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  // A hall that failed may hold handles of its broken actors: leave now, for the service manager to restart it.
  // So may the inspector's client and relay after their stop.
  if (code !== 0 || inspector) process.exit(code);
  return 0;
}

function acpFlags(options: StartOptions): HallStartFlags {
  return definedFields({ acpPort: options.acpPort, acpHost: options.acpHost });
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

/**
 * Starts the hall as a detached process logging to .raider-hall/hall.log,
 * and waits until it serves (or has failed): exit 0 when every face it was
 * configured for serves, 1 (the hall running without them) when one does
 * not, and the hall's own exit code and error when it did not start.
 */
async function startDaemon(options: StartOptions): Promise<number> {
  const paths = hallPaths(options.dir);
  fs.mkdirSync(`${paths.root}/.raider-hall`, { recursive: true });
  const logFd = fs.openSync(paths.hallLog, 'a');
  const logStart = fs.fstatSync(logFd).size;
  const bin = fileURLToPath(new URL('../../../bin/raider', import.meta.url));
  const inspectArgs =
    options.inspect === undefined ? [] : typeof options.inspect === 'string' ? ['--inspect', options.inspect] : ['--inspect'];
  const child = spawn(process.execPath, [bin, 'hall', 'start', paths.root, ...acpArgs(options), ...inspectArgs], {
    detached: true,
    stdio: ['ignore', logFd, logFd, 'ipc'],
    env: process.env,
  });
  fs.closeSync(logFd);
  const outcome = await new Promise<Exclude<DaemonReport, { type: 'log' }> | { type: 'exited'; code: number } | { type: 'timeout' }>(
    (resolve) => {
      const timer = setTimeout(() => resolve({ type: 'timeout' }), READY_TIMEOUT_MS);
      child.on('message', (value) => {
        const report = DaemonReport.safeParse(value);
        if (!report.success) return;
        if (report.data.type === 'log') process.stderr.write(`${report.data.line}\n`);
        else {
          clearTimeout(timer);
          resolve(report.data);
        }
      });
      // 'close', not 'exit': a report sent just before the exit is read first.
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ type: 'exited', code: code ?? 1 });
      });
    },
  );
  child.removeAllListeners();
  if (child.connected) child.disconnect();
  child.unref();
  switch (outcome.type) {
    case 'ready': {
      process.stdout.write(`Hall started with PID ${outcome.pid}\n`);
      // Why each face does not serve came already, as the hall's own start-up line.
      const failed = Object.entries(outcome.faceErrors);
      if (failed.length === 0) return 0;
      process.stderr.write(
        `The hall runs without ${failed.map(([face]) => face).join(', ')}; stop it with: raider hall stop ${paths.root}\n`,
      );
      return 1;
    }
    case 'failed':
      process.stderr.write(`${outcome.message}\n`);
      return outcome.exitCode === 0 ? 1 : outcome.exitCode;
    case 'exited': {
      // Died before it could report (a crash): what it wrote is in the log.
      const log = fs.readFileSync(paths.hallLog, 'utf8').slice(logStart).trim();
      process.stderr.write(`${log || `the hall exited with code ${outcome.code}`}\n`);
      return outcome.code === 0 ? 1 : outcome.code;
    }
    case 'timeout':
      process.stderr.write(`The hall did not come up within ${READY_TIMEOUT_MS / 1000} s; see ${paths.hallLog}\n`);
      return 1;
  }
}

function errorText(err: unknown): string {
  return errorMessage(err);
}
