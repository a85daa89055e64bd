/**
 * Whether a run's final `message` repeats text its raider already streamed as
 * `message.chunk`s. An ACP agent's final message is the text it streamed
 * after its last tool call (docs/agents.md, "How a run maps to ACP"), so a
 * reader that showed the chunks as they came (`attach`, the ACP face) does
 * not show it again; a raider that streams nothing (the built-in raider) has
 * its final message shown as it is.
 */
export class StreamedAnswer {
  /** The text streamed since the last tool call; null until a chunk came. */
  private text: string | null = null;

  /** Takes the run's next event; true when it is a final `message` whose text was already streamed. */
  repeats(event: Readonly<Record<string, unknown>>): boolean {
    switch (event.type) {
      case 'message.chunk':
        this.text = (this.text ?? '') + (typeof event.content === 'string' ? event.content : '');
        return false;
      case 'tool.call':
        // The final message is what comes after the last call: only that much need be kept.
        if (this.text !== null) this.text = '';
        return false;
      case 'message':
        return this.text !== null && typeof event.content === 'string' && this.text.trimEnd().endsWith(event.content.trim());
      default:
        return false;
    }
  }
}
