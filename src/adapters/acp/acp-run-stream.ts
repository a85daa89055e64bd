/**
 * One run of an ACP session, streamed to its client: the run's events are
 * followed (its events file here, or the cluster's copy of a run on another
 * hall) and each event becomes `session/update`s as it comes, an ACP agent's
 * streamed text as its chunks; a final `message` that repeats streamed text
 * is not sent again. At the run's end the final answer is sent as one chunk
 * when the run streamed no text of its own.
 */
import { finalChunk, updatesForEvent, type AcpUpdate, type AnnouncedCalls, type RunEnd } from '../../domain/acp-mapping.js';
import { StreamedAnswer } from '../../domain/streamed-answer.js';
import { describeLineFault, type LineFault } from '../../protocol/line-reader.js';
import type { RunEventSource } from './run-event-tail.js';

/** Makes the follower of one run's events, given where each event and each skipped line goes. */
export type RunEventSourceFactory = (
  onEvent: (event: Record<string, unknown>) => void,
  onFault: (fault: LineFault) => void,
) => RunEventSource;

export class AcpRunStream {
  private streamedText = false;
  private readonly answer = new StreamedAnswer();
  private readonly tail: RunEventSource;

  constructor(
    source: RunEventSourceFactory,
    runId: string,
    /** Sends one update to the session's client. */
    private readonly send: (update: AcpUpdate) => Promise<void>,
    log: (line: string) => void,
    /** The tool calls the client has been shown (by the run or a permission question), so a later event about one updates it. */
    private readonly announced: AnnouncedCalls,
  ) {
    this.tail = source(
      (event) => {
        if (this.answer.repeats(event)) return;
        for (const update of updatesForEvent(runId, event, this.announced)) {
          if (update.sessionUpdate === 'agent_message_chunk') this.streamedText = true;
          void this.send(update).catch(() => {});
        }
      },
      (fault) => log(`acp: run ${runId}: a line of its events was skipped: ${describeLineFault(fault)}`),
    );
  }

  start(): void {
    this.tail.start();
  }

  /** Delivers the run's events written so far (a permission question about a call comes after the call). */
  catchUp(): void {
    this.tail.catchUp?.();
  }

  /** The session closed: stop reading. */
  stop(): void {
    this.tail.stop();
  }

  /** The run ended: read what is left, then send the final answer if nothing streamed it. */
  async finish(end: RunEnd): Promise<void> {
    await this.tail.finish();
    if (!this.streamedText) await sendFinalAnswer(end, this.send);
  }
}

/** The final answer of a run the session never streamed (it ended before it could be followed). */
export async function sendFinalAnswer(end: RunEnd, send: (update: AcpUpdate) => Promise<void>): Promise<void> {
  const chunk = finalChunk(end, false);
  if (chunk) await send(chunk).catch(() => {});
}
