/**
 * How a hall started by `start --daemon` tells its starter how the start
 * went, over the IPC channel of the spawn: its start-up diagnostics (config
 * warnings) as they come, then `ready` (with the faces that could not serve)
 * or `failed` (the hall's own error and exit code). Until it is ready the
 * hall writes nothing to `.raider-hall/hall.log`: a start that is refused
 * (another hall runs there) leaves the running hall's log alone.
 */
import { z } from 'zod';

export const DaemonReport = z.discriminatedUnion('type', [
  z.object({ type: z.literal('log'), line: z.string() }),
  z.object({ type: z.literal('ready'), pid: z.number().int(), faceErrors: z.record(z.string(), z.string()) }),
  z.object({ type: z.literal('failed'), message: z.string(), exitCode: z.number().int() }),
]);
export type DaemonReport = z.infer<typeof DaemonReport>;

/** The hall's side: null when it was not started by `start --daemon` (no IPC channel). */
export interface DaemonReporter {
  /** A diagnostic line: to the starter now, and to the log once the hall is ready. */
  log(line: string): void;
  ready(faceErrors: Readonly<Record<string, string>>): Promise<void>;
  failed(message: string, exitCode: number): Promise<void>;
}

export function daemonReporter(): DaemonReporter | null {
  const send = process.send?.bind(process);
  if (send === undefined) return null;
  let starting: string[] | null = [];
  const report = (message: DaemonReport) =>
    new Promise<void>((resolve) => {
      if (!process.connected) return resolve();
      send(message, undefined, {}, () => resolve());
    });
  // The starter is gone once it has its answer: let go of the channel so it does not keep either side alive.
  const done = async (message: DaemonReport) => {
    await report(message);
    if (process.connected) process.disconnect();
  };
  return {
    log(line) {
      if (starting === null) {
        process.stderr.write(`${line}\n`);
        return;
      }
      starting.push(line);
      void report({ type: 'log', line });
    },
    async ready(faceErrors) {
      for (const line of starting ?? []) process.stderr.write(`${line}\n`);
      starting = null;
      await done({ type: 'ready', pid: process.pid, faceErrors: { ...faceErrors } });
    },
    async failed(message, exitCode) {
      await done({ type: 'failed', message, exitCode });
    },
  };
}
