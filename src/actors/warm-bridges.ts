/**
 * Warm ACP bridges (docs/agents.md, "Warm bridges"): for each entry with
 * `acp.keep_warm: N`, N bridges started ahead by the hall's own spawner
 * (`raider acp-client --spare`), their modules loaded, each waiting on its
 * stdin, a socket whose other end only this hall holds. A run of the entry
 * takes a ready one (prepare-run.actor.ts, so its ledger record names it),
 * and the run's process actor hands the run over on that socket
 * (raider-process.actor.ts): from then on the bridge is the run's raider,
 * its exit the run's end (said by the bridge on that socket as it exits),
 * its stderr spool copied into the slot log as any raider's. A replacement
 * starts in the background, 2 s after the take or once the run's end is
 * told, whichever comes first. Nothing here is durable:
 * an unused bridge ends at its stdin's end, so it never outlives its hall.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { RaiderStarter, SpawnRequest, SpawnWatcher } from '../adapters/os/fork-server.js';
import { killGroup, signalGroup } from '../adapters/os/process-group.js';
import { processAlive } from '../adapters/os/process-alive.js';
import { RaiderStderr } from '../adapters/os/stderr-spool.js';
import { canonicalLine } from '../protocol/canonical-line.js';
import {
  type BridgeHandOver,
  HANDOVER_VERSION,
  SPARE_READY_LINE,
  SPARE_RUN_ID_PREFIX,
  spareExitCode,
} from '../protocol/bridge-handover.js';
import { DEFAULT_WARM_IDLE_S } from '../domain/acp-agents.js';
import { definedFields } from '../domain/defined-fields.js';
import { inheritedEnv } from '../domain/raider-argv.js';
import { EARLY_END_MS, retryWaitMs, spareEndVerdict } from '../domain/warm-retry.js';
import type { HallConfig } from '../ports/hall-config.js';

/** What warm bridges need of the starter: the hall's own spawner, which can give a process a stdin socket. */
export type SpareSpawner = Pick<RaiderStarter, 'spawn'>;

/** An entry's warm bridges: how many, and how long one waits unused before the hall ends it. */
export interface WarmEntry {
  entry: string;
  keep: number;
  idleS: number;
}

/** A warm bridge a run took, as its spawn spec and ledger record name it. */
export interface TakenSpare {
  id: string;
  pid: number;
}

/** A warm bridge as `status` shows it. */
export interface SpareStatus {
  pid: number | null;
  ready: boolean;
  /** Seconds since it was started. */
  age: number;
}

/** An entry whose warm bridges fail to start, as `status` shows it. */
export interface SpareRetry {
  /** Starts that failed in a row (a bridge that ended by itself soon after it got ready is one), since the last one that got ready. */
  failed_starts: number;
  /** Seconds until the next start; absent while one is under way. */
  retry_in?: number;
}

/** The run's start as a bridge started for it would have had it, for the hand-over line. */
export interface HandOverRequest extends SpawnRequest {
  runId: string;
  /** The bridge's arguments after `acp-client`. */
  bridgeArgs: readonly string[];
}

/** Taking and handing over, as prepare-run and the process actor see them. */
export interface SparePool {
  take(entry: string): TakenSpare | undefined;
  /** Hands the run to the taken spare; null when it is no longer there (the run then starts a bridge of its own). */
  handOver(id: string, request: HandOverRequest, watcher: SpawnWatcher): (() => void) | null;
  /** A taken spare whose run will not start: it is ended. */
  release(id: string): void;
}

/** A taken spare not handed a run within this long is ended (its run was stopped before it started). */
const RESERVED_MS = 60_000;
/** How long after a hand-over the replacement starts, unless the run ends sooner. */
const REFILL_AFTER_MS = 2000;
/** The longest line a spare says (`ready`, `exit CODE`), with room to spare. */
const MAX_LINE_CHARS = 256;
/** A spare's own limit past the hall's `warm_idle`: it ends by itself only when the hall is stuck. */
const BACKSTOP_S = 60;

type State = 'starting' | 'ready' | 'reserved' | 'handed' | 'ending';

interface Spare {
  id: string;
  entry: WarmEntry;
  state: State;
  startedAt: number;
  /** When it said it was ready. */
  readyAt?: number;
  /** The entry's failed starts in a row before it got ready: it carries them until it proves itself. */
  failedBefore: number;
  pid?: number;
  stdin?: Duplex;
  timer?: NodeJS.Timeout;
  /** After it was taken: when its replacement starts (sooner if it ends). */
  refill?: NodeJS.Timeout;
  /** After a hand-over: where its exit goes (the run's watcher, once its stderr is copied); cleared once told. */
  exitTo?: (code: number | null, signal: NodeJS.Signals | null) => void;
}

/** The entries that keep bridges warm, from the config. */
export function warmEntries(config: Pick<HallConfig, 'raiders'>): WarmEntry[] {
  const out: WarmEntry[] = [];
  for (const [entry, settings] of Object.entries(config.raiders)) {
    const keep = settings.acp?.keep_warm ?? 0;
    if (keep > 0) out.push({ entry, keep, idleS: settings.acp?.warm_idle ?? DEFAULT_WARM_IDLE_S });
  }
  return out;
}

export class WarmBridges implements SparePool {
  private readonly spares = new Map<string, Spare>();
  /** Handed spares by their run's id, until the run's end is told (its replacement starts then). */
  private readonly handedRuns = new Map<string, Spare>();
  private readonly failures = new Map<string, number>();
  /** The starts waited for after failed ones: each one's entry and when it starts. */
  private readonly retries = new Map<NodeJS.Timeout, { entry: string; at: number }>();
  private closing = false;

  constructor(
    private readonly deps: {
      spawner: SpareSpawner;
      /** The bridge's command (`raider acp-client` as resolveAcpBridgeCommand gives it). */
      bridge: { command: string; prefixArgs: readonly string[] };
      baseEnv: Readonly<Record<string, string | undefined>>;
      root: string;
      /** Where each entry's warm bridges write their own stderr (`ENTRY.log`): what they say while no run is theirs. */
      logDir: string;
      entries: readonly WarmEntry[];
      log: (line: string) => void;
    },
  ) {}

  start(): void {
    if (this.deps.entries.length === 0) return;
    fs.mkdirSync(this.deps.logDir, { recursive: true });
    for (const entry of this.deps.entries) this.fill(entry);
  }

  take(entry: string): TakenSpare | undefined {
    if (this.closing) return undefined;
    for (const spare of this.spares.values()) {
      if (spare.entry.entry !== entry || spare.state !== 'ready' || spare.pid === undefined) continue;
      spare.state = 'reserved';
      this.clearTimer(spare);
      spare.timer = setTimeout(() => this.end(spare), RESERVED_MS);
      // The replacement starts once the run has ended or its agent has had time to start, not
      // while it starts: a bridge loading beside it on a small machine slows that start (bench/RESULTS.md, "Warm bridges").
      spare.refill = setTimeout(() => this.refill(spare), REFILL_AFTER_MS);
      return { id: spare.id, pid: spare.pid };
    }
    return undefined;
  }

  handOver(id: string, request: HandOverRequest, watcher: SpawnWatcher): (() => void) | null {
    const spare = this.spares.get(id);
    if (spare === undefined || spare.state !== 'reserved' || spare.pid === undefined || spare.stdin === undefined) return null;
    // Dead already, its exit reported on a later turn (which ends and replaces it): no bridge for the run.
    if (!processAlive(spare.pid)) return null;
    const pid = spare.pid;
    const stdin = spare.stdin;
    // The run's files as the spawner makes them for a raider it starts: its events file
    // empty, its stderr spool there (the bridge appends to both) and followed into the slot log.
    const stderr = new RaiderStderr(request);
    try {
      fs.closeSync(fs.openSync(request.stdoutPath, 'w'));
      fs.closeSync(fs.openSync(stderr.path, 'a'));
    } catch (err) {
      // The run cannot start (its starter says why); the spare is no one's.
      this.end(spare);
      throw err;
    }
    spare.state = 'handed';
    this.clearTimer(spare);
    this.handedRuns.set(request.runId, spare);
    let listening = true;
    stderr.follow();
    spare.exitTo = (code, signal) =>
      stderr.finish(() => {
        if (listening) watcher.exited(code, signal);
      });
    const handOver: BridgeHandOver = {
      version: HANDOVER_VERSION,
      run_id: request.runId,
      argv: [...request.bridgeArgs],
      env: { ...request.env },
      cwd: request.cwd,
      events_path: request.stdoutPath,
      stderr_path: stderr.path,
    };
    // Not ended: the bridge says its exit code on the socket as it exits (exitSaid).
    stdin.write(`${canonicalLine(handOver)}\n`);
    // On a later turn, as the spawner reports a pid.
    setImmediate(() => {
      if (listening) watcher.spawned(pid);
    });
    return () => {
      listening = false;
    };
  }

  /**
   * A run's end has been told (its `raider.done` published). A handed bridge's replacement starts
   * then, not while the end is still being told: a bridge loading takes a core of a small machine.
   */
  runEnded(runId: string): void {
    const spare = this.handedRuns.get(runId);
    if (spare === undefined) return;
    this.handedRuns.delete(runId);
    this.refill(spare);
  }

  release(id: string): void {
    const spare = this.spares.get(id);
    if (spare !== undefined && spare.state === 'reserved') this.end(spare);
  }

  /**
   * `status`'s section: each entry's unused warm bridges (those starting or ready), and, only
   * while some entry's fail to start, how many failed in a row and when the next start is.
   */
  status(): { warm_bridges: Record<string, SpareStatus[]>; warm_bridge_retries?: Record<string, SpareRetry> } {
    const retrying = this.retrying();
    return {
      warm_bridges: this.unused(),
      ...definedFields({ warm_bridge_retries: Object.keys(retrying).length > 0 ? retrying : undefined }),
    };
  }

  /** Starts no more and ends the unused ones (their stdin's end, and SIGTERM); a handed one is its run's. */
  close(): void {
    this.closing = true;
    for (const timer of this.retries.keys()) clearTimeout(timer);
    this.retries.clear();
    for (const spare of [...this.spares.values(), ...this.handedRuns.values()]) {
      if (spare.refill !== undefined) clearTimeout(spare.refill);
      spare.refill = undefined;
      if (spare.state !== 'handed') this.end(spare);
    }
    this.handedRuns.clear();
  }

  private unused(): Record<string, SpareStatus[]> {
    const out: Record<string, SpareStatus[]> = {};
    const now = Date.now();
    for (const { entry } of this.deps.entries) out[entry] = [];
    for (const spare of this.spares.values()) {
      if (spare.state !== 'starting' && spare.state !== 'ready') continue;
      // Every entry has its list from above.
      out[spare.entry.entry]?.push({
        pid: spare.pid ?? null,
        ready: spare.state === 'ready',
        age: Math.round((now - spare.startedAt) / 100) / 10,
      });
    }
    return out;
  }

  /** The entries whose last starts failed. */
  private retrying(): Record<string, SpareRetry> {
    const out: Record<string, SpareRetry> = {};
    const now = Date.now();
    for (const [entry, failed] of this.failures) {
      const next = Math.min(...[...this.retries.values()].filter((r) => r.entry === entry).map((r) => r.at));
      const retryIn = Number.isFinite(next) ? Math.max(0, Math.round((next - now) / 100) / 10) : undefined;
      out[entry] = { failed_starts: failed, ...definedFields({ retry_in: retryIn }) };
    }
    return out;
  }

  private fill(entry: WarmEntry): void {
    if (this.closing) return;
    let waiting = 0;
    for (const spare of this.spares.values())
      if (spare.entry === entry && (spare.state === 'starting' || spare.state === 'ready')) waiting++;
    for (; waiting < entry.keep; waiting++) this.startOne(entry);
  }

  private startOne(entry: WarmEntry): void {
    const id = randomBytes(6).toString('hex');
    const { bridge, baseEnv, root } = this.deps;
    // Until its hand-over, whose environment replaces this one.
    const env = inheritedEnv(baseEnv);
    env.RAIDER_HALL_ROOT = root;
    // Not a run's id: a hall that finds it and no run that names it knows it is nobody's run.
    env.RAIDER_HALL_RUN_ID = `${SPARE_RUN_ID_PREFIX}${id}`;
    const spare: Spare = { id, entry, state: 'starting', startedAt: Date.now(), failedBefore: 0 };
    this.spares.set(id, spare);
    this.deps.spawner.spawn(
      {
        command: bridge.command,
        args: [...bridge.prefixArgs, '--spare', '--warm-idle', String(entry.idleS + BACKSTOP_S)],
        env,
        cwd: root,
        stdoutPath: '/dev/null',
        stderrPath: path.join(this.deps.logDir, `${entry.entry}.log`),
        stdin: 'socket',
      },
      {
        spawned: (pid, stdin) => {
          spare.pid = pid;
          if (stdin === undefined) {
            this.deps.log(`raider ${entry.entry}: a warm bridge got no stdin socket; it is ended`);
            signalGroup(pid, 'SIGTERM');
            return;
          }
          spare.stdin = stdin;
          this.listen(spare, stdin);
          // Ended (the hall stops) before its pid was known: told now.
          if (spare.state === 'ending') this.tellToEnd(spare);
          else if (this.closing) this.end(spare);
        },
        failed: (error) => {
          this.spares.delete(id);
          // A start the hall's stop turned away is no news.
          if (this.closing) return;
          this.deps.log(`raider ${entry.entry}: a warm bridge could not be started: ${error}`);
          this.retryLater(entry);
        },
        exited: (code, signal) => {
          if (spare.state === 'handed') {
            this.spares.delete(id);
            spare.stdin?.destroy();
            // Its run's end, unless the bridge said it as it exited; the replacement starts once that end is told (runEnded).
            this.tellExit(spare, code, signal);
            return;
          }
          const verdict = spareEndVerdict({
            state: spare.state === 'starting' || spare.state === 'ready' ? spare.state : 'taken',
            endedAt: Date.now(),
            ...definedFields({ readyAt: spare.readyAt }),
          });
          this.clearTimer(spare);
          // A taken spare that ended unhanded: the fill below replaces it.
          if (spare.refill !== undefined) clearTimeout(spare.refill);
          spare.stdin?.destroy();
          this.spares.delete(id);
          if (this.closing || spare.state === 'ending') {
            // Ended by the hall: replaced, unless it stops (fill starts nothing then).
            this.fill(entry);
            return;
          }
          const early =
            verdict.kind === 'retry' && verdict.early ? ` within ${EARLY_END_MS / 1000} s of getting ready, a failed start` : '';
          this.deps.log(
            `raider ${entry.entry}: a warm bridge (pid ${spare.pid ?? '?'}) ended by itself (${signal ?? `exit code ${code ?? 0}`})${early}; see ${path.join(this.deps.logDir, `${entry.entry}.log`)}`,
          );
          // A taken one ended its run's way; one that lived long was fine: replaced at once.
          if (verdict.kind === 'replace') this.fill(entry);
          else this.retryLater(entry, spare.failedBefore);
        },
        lost: () => {},
      },
    );
  }

  /** Its word that it is loaded, and once handed a run, its exit code as it exits; any other line is ignored. */
  private listen(spare: Spare, stdin: Duplex): void {
    let heard = '';
    stdin.on('error', () => {});
    stdin.setEncoding('utf8');
    stdin.on('data', (chunk: string) => {
      heard += chunk;
      for (let end = heard.indexOf('\n'); end >= 0; end = heard.indexOf('\n')) {
        const line = heard.slice(0, end + 1);
        heard = heard.slice(end + 1);
        if (spare.state === 'starting' && line === SPARE_READY_LINE) this.ready(spare);
        const code = spare.state === 'handed' ? spareExitCode(line.slice(0, -1)) : null;
        if (code !== null) this.exitSaid(spare, code);
      }
      // Its lines are short: a longer one is none of them.
      if (heard.length > MAX_LINE_CHARS) heard = '';
    });
  }

  private ready(spare: Spare): void {
    spare.state = 'ready';
    spare.readyAt = Date.now();
    spare.failedBefore = this.failures.get(spare.entry.entry) ?? 0;
    this.failures.delete(spare.entry.entry);
    spare.timer = setTimeout(() => this.end(spare), spare.entry.idleS * 1000);
  }

  /**
   * A handed bridge said it exits with `code`, its run's events written and its agent gone: its run
   * ends now, not once the kernel has taken the process apart. What is left of its process group is
   * killed first, as at any raider's exit; the exit itself, which follows, then tells nobody.
   */
  private exitSaid(spare: Spare, code: number): void {
    if (spare.exitTo === undefined || spare.pid === undefined) return;
    killGroup(spare.pid);
    spare.stdin?.destroy();
    this.tellExit(spare, code, null);
  }

  /** The handed spare's end, to its run, once. */
  private tellExit(spare: Spare, code: number | null, signal: NodeJS.Signals | null): void {
    const exitTo = spare.exitTo;
    spare.exitTo = undefined;
    exitTo?.(code, signal);
  }

  /** Its stdin's end tells it to go; SIGTERM to its group makes sure. */
  private end(spare: Spare): void {
    if (spare.state === 'ending' || spare.state === 'handed') return;
    spare.state = 'ending';
    this.clearTimer(spare);
    this.tellToEnd(spare);
  }

  /** What ends a spare, as far as it is known yet (a spare still starting has no pid nor stdin: `spawned` tells it then). */
  private tellToEnd(spare: Spare): void {
    spare.stdin?.end();
    if (spare.pid !== undefined) signalGroup(spare.pid, 'SIGTERM');
  }

  /** The taken spare's replacement, now (once). */
  private refill(spare: Spare): void {
    if (spare.refill === undefined) return;
    clearTimeout(spare.refill);
    spare.refill = undefined;
    this.fill(spare.entry);
  }

  private clearTimer(spare: Spare): void {
    if (spare.timer !== undefined) clearTimeout(spare.timer);
    spare.timer = undefined;
  }

  /**
   * A spare of this entry failed to start (ended before it was ready, or soon after; `failedBefore` the
   * failed starts in a row before one that got ready): the next start waits longer each time.
   */
  private retryLater(entry: WarmEntry, failedBefore = 0): void {
    if (this.closing) return;
    const n = Math.max(this.failures.get(entry.entry) ?? 0, failedBefore);
    this.failures.set(entry.entry, n + 1);
    const wait = retryWaitMs(n);
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      this.fill(entry);
    }, wait);
    timer.unref();
    this.retries.set(timer, { entry: entry.entry, at: Date.now() + wait });
  }
}
