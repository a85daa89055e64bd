/**
 * The hand-over of a run to a warm ACP bridge (docs/agents.md, "Warm
 * bridges"): one JSON line the hall writes on the stdin of a bridge started
 * ahead with `raider acp-client --spare`, then closes. It says what a bridge
 * started for the run would have had: its arguments after `acp-client`
 * (src/acp-raider/args.ts), its environment and working directory, and the
 * run's files it writes in place of its stdout (the events file) and stderr
 * (the run's stderr spool, copied into the slot log with the run id).
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

/** The prefix of a warm bridge's RAIDER_HALL_RUN_ID (`spare-ID`): a restarted hall finds a handed run by it. */
export const SPARE_RUN_ID_PREFIX = 'spare-';
