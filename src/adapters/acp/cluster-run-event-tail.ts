/**
 * Following the events of a run on another hall of a shared cluster, for an
 * ACP session connected here (docs/cluster.md, "ACP across halls"): the run's
 * hall ships its events file to `raider_hall_run_output` as it goes, and
 * this reads what was added every quarter second. The run's hall ships the
 * rest before its `raider.done` reaches the cluster, so `finish`, called on
 * that event, delivers every event of the run.
 */
import { lineSink, MAX_LINE_BYTES, type LineFault, type LineSink } from '../../protocol/line-reader.js';
import { errorMessage } from '../../domain/error-message.js';
import type { RunOutputs } from '../../ports/cluster-queue.js';
import { deliver, type RunEventSource } from './run-event-tail.js';

const READ_MS = 250;

export class ClusterRunEventTail implements RunEventSource {
  private offset = 0;
  private readonly lines: LineSink;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** One read at a time, in order. */
  private reading: Promise<void> = Promise.resolve();
  private lastProblem: string | null = null;

  constructor(
    private readonly outputs: Pick<RunOutputs, 'read'>,
    private readonly runId: string,
    onEvent: (event: Record<string, unknown>) => void,
    onFault: (fault: LineFault) => void,
    private readonly log: (line: string) => void,
  ) {
    this.lines = lineSink((line) => deliver(line, onEvent), { maxBytes: MAX_LINE_BYTES, utf8: 'replace', onFault });
  }

  start(): void {
    this.timer = setInterval(() => void this.read(), READ_MS);
    this.timer.unref();
    void this.read();
  }

  async finish(): Promise<void> {
    await this.read();
    this.stop();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private read(): Promise<void> {
    this.reading = this.reading.then(async () => {
      if (this.stopped) return;
      try {
        const more = await this.outputs.read(this.runId, 'events', this.offset);
        this.lastProblem = null;
        if (more === null || more.length === 0 || this.stopped) return;
        this.offset += more.length;
        this.lines.push(more);
      } catch (err) {
        const problem = `acp: cannot read the events of run ${this.runId} from the cluster: ${errorMessage(err)}`;
        if (problem !== this.lastProblem) this.log(problem);
        this.lastProblem = problem;
      }
    });
    return this.reading;
  }
}
