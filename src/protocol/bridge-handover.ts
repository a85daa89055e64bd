/**
 * The hand-over of a run to a warm ACP bridge (docs/agents.md, "Warm
 * bridges"): one JSON line the hall writes on the stdin of a bridge started
 * ahead with `raider acp-client --spare`. It says what a bridge
 * started for the run would have had: its arguments after `acp-client`
 * (src/acp-raider/args.ts), its environment and working directory, and the
 * run's files it writes in place of its stdout (the events file) and stderr
 * (the run's stderr spool, copied into the slot log with the run id). The
 * socket stays open: the bridge says its exit code on it at the run's end.
 */
import { z } from 'zod';

export const HANDOVER_VERSION = 1;

export const bridgeHandOverSchema = z.object({
  version: z.literal(HANDOVER_VERSION),
  run_id: z.string().min(1),
  argv: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  cwd: z.string().min(1),
  events_path: z.string().min(1),
  stderr_path: z.string().min(1),
});

export type BridgeHandOver = z.infer<typeof bridgeHandOverSchema>;

/** What a warm bridge says on its stdin once its modules are loaded: it is ready to take a run. */
export const SPARE_READY_LINE = 'ready\n';

/**
 * What a handed bridge says on its stdin as it exits, everything of its run
 * written and its agent gone: `exit CODE`. The hall takes it for the exit
 * (and kills the bridge's process group, which it would at the exit), not
 * waiting for the kernel to take the process apart.
 */
export function spareExitLine(code: number): string {
  return `exit ${code}\n`;
}

/** The exit code of a line `spareExitLine` made, or null for any other line. */
export function spareExitCode(line: string): number | null {
  const match = /^exit (\d{1,3})$/.exec(line);
  return match?.[1] !== undefined ? Number(match[1]) : null;
}

/** The prefix of a warm bridge's RAIDER_HALL_RUN_ID (`spare-ID`): a restarted hall finds a handed run by it. */
export const SPARE_RUN_ID_PREFIX = 'spare-';
