/**
 * Group commit: who waits for which sync. Operations are numbered as they
 * are applied; a commit waits until a sync covers the last operation it owes,
 * and every commit asked for while one sync runs shares the next one.
 */
import { SerialQueue } from './serial-queue.js';

export class GroupCommit {
  private applied = 0;
  /** Commits owe operations up to this one; those after it may wait (see `note`). */
  private owed = 0;
  private durable = 0;
  private readonly syncs = new SerialQueue();

  /**
   * `sync` makes every operation applied so far durable, or throws an error a
   * user can act on. `holdsLoop`: whether the next sync blocks the event loop
   * (see syncApplied); by default it is taken to.
   */
  constructor(
    private readonly sync: () => Promise<void>,
    private readonly holdsLoop: () => boolean = () => true,
  ) {}

  /** One more operation was applied; a `later` one does not hold up a commit (the next sync takes it along). */
  note(later: boolean): void {
    this.applied++;
    if (!later) this.owed = this.applied;
  }

  /** How many operations were applied. */
  get count(): number {
    return this.applied;
  }

  /** Resolves once every operation owed so far is durable. */
  commit(): Promise<void> {
    return this.until(this.owed);
  }

  /** Resolves once every operation applied so far is durable, the later ones too. */
  commitAll(): Promise<void> {
    return this.until(this.applied);
  }

  private async until(upTo: number): Promise<void> {
    while (this.durable < upTo) await this.syncs.once('sync', () => this.syncApplied());
  }

  private async syncApplied(): Promise<void> {
    // Every operation of this turn of the event loop joins a sync that blocks the loop
    // (one such sync per turn, after the turn's work: a raider's spawn request has left
    // by then). A sync on the thread pool starts at once instead: it costs the loop
    // nothing, a slow disk's sync is then under way sooner (a started spawn's reply waits
    // for it), and what comes later in the turn joins the next one.
    if (this.holdsLoop()) await new Promise<void>((resolve) => setImmediate(resolve));
    const upTo = this.applied;
    if (this.durable >= upTo) return;
    await this.sync();
    this.durable = Math.max(this.durable, upTo);
  }
}
