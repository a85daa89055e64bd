/**
 * The doorbell: LISTEN on the cluster's channel, on a connection of its own
 * (a pooled one would drop it), retried while the database is away. A
 * notification sent while it reconnects is lost, so the callers also poll;
 * every (re)connection rings once for whatever rang meanwhile.
 */
import pg from 'pg';
import { clusterChannel } from './scope.js';

const LISTEN_RETRY_MS = 1_000;

export class ClusterDoorbell {
  private rings: Array<() => void> = [];
  private listener: pg.Client | null = null;
  private listenTimer: NodeJS.Timeout | null = null;
  /** The LISTEN connection is open, or being opened or retried. */
  private listening = false;
  private closed = false;

  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly cluster: string,
  ) {}

  onRing(listener: () => void): void {
    this.rings.push(listener);
    // One LISTEN connection for all listeners: a second listener added while the first connects must not open another.
    if (!this.listening) {
      this.listening = true;
      void this.listen();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.listenTimer) clearTimeout(this.listenTimer);
    const client = this.listener;
    this.listener = null;
    await client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client(this.connection);
    const retry = () => {
      if (this.closed || this.listenTimer !== null) return;
      if (this.listener === client) this.listener = null;
      client.end().catch(() => undefined);
      this.listenTimer = setTimeout(() => {
        this.listenTimer = null;
        void this.listen();
      }, LISTEN_RETRY_MS);
      this.listenTimer.unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', () => {
      for (const ring of this.rings) ring();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(clusterChannel(this.cluster))}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.listener = client;
      // Whatever rang while no one listened: look now.
      for (const ring of this.rings) ring();
    } catch {
      retry();
    }
  }
}
