/**
 * The last outcomes the hall reported (`raider.done`, `raider.refused`), so a
 * wait for a run that has just ended answers with the event itself rather
 * than with what can be read back from its files.
 */
import type { Envelope, EventBus } from '../../ports/bus.js';

const KEEP = 2000;

export class RecentOutcomes {
  private readonly byId = new Map<string, Envelope>();
  private off: (() => void) | null = null;

  start(bus: EventBus): void {
    this.off = bus.subscribe({
      filter: 'raider.',
      receive: (event) => {
        if (event.type !== 'raider.done' && event.type !== 'raider.refused') return;
        if (event.type === 'raider.done') this.remember(event.id, event);
        this.remember(event.mission_id, event);
      },
    });
  }

  stop(): void {
    this.off?.();
  }

  /** The outcome of a run id or mission id, if it ended lately. */
  get(id: string): Envelope | undefined {
    return this.byId.get(id);
  }

  private remember(key: string, event: Envelope): void {
    this.byId.delete(key);
    this.byId.set(key, event);
    // A Map keeps insertion order: the first key is the oldest.
    const oldest = this.byId.keys().next();
    if (this.byId.size > KEEP && !oldest.done) this.byId.delete(oldest.value);
  }
}
