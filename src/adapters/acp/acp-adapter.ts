/**
 * Serves the hall's ACP agent: on `.raider-hall.acp.socket` (always; the
 * `raider acp --stdio` bridge connects there) and on TCP when `acp.port`,
 * `RAIDER_HALL_ACP_PORT` or `--acp-port` asks for it (host 127.0.0.1 unless
 * told otherwise). Every connection gets its own agent; sessions live in
 * one AcpHub.
 */
import net from 'node:net';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import type { HallAdapter, HallAdapterFactory, HallServices } from '../../ports/hall-services.js';
import { createAcpAgent } from './acp-agent.js';
import { AcpHub } from './acp-hub.js';
import { AcpSessionStore } from './acp-session-store.js';
import { listenUnix, type UnixListener } from '../../os/socket-path.js';
import { errorCode, errorMessage } from '../../domain/error-message.js';

export function acpSocketPath(root: string): string {
  return path.join(root, '.raider-hall.acp.socket');
}

/**
 * The TCP address asked for, and where its port came from (for messages): the
 * command line wins over the environment, which wins over the config; no
 * port, no TCP.
 */
export function acpTcpAddress(
  services: Pick<HallServices, 'env' | 'config' | 'flags' | 'paths'>,
): { host: string; port: number; from: string } | null {
  const envPort = services.env.RAIDER_HALL_ACP_PORT;
  const [port, from] =
    services.flags.acpPort !== undefined
      ? [services.flags.acpPort, '--acp-port']
      : envPort !== undefined && envPort !== ''
        ? [Number(envPort), 'RAIDER_HALL_ACP_PORT']
        : [services.config.acp.port, `acp.port in ${services.paths.config}`];
  if (port === null || !Number.isInteger(port) || port < 0 || port > 65535) return null;
  const host = services.flags.acpHost || services.env.RAIDER_HALL_ACP_HOST || services.config.acp.host || '127.0.0.1';
  return { host, port, from };
}

/** Why a listen failed, in words, with the system's code for whoever searches for it. */
function listenProblem(err: unknown): string {
  const code = errorCode(err);
  if (code === 'EADDRINUSE') return 'another program listens there (EADDRINUSE)';
  if (code === 'EACCES') return 'not allowed (EACCES; a port below 1024 needs privileges)';
  if (code === 'EADDRNOTAVAIL') return 'this machine has no such address (EADDRNOTAVAIL)';
  return errorMessage(err);
}

export const acpAdapter: HallAdapterFactory = (services) => new AcpAdapter(services);

class AcpAdapter implements HallAdapter {
  readonly name = 'acp';
  private readonly hub: AcpHub;
  private readonly servers: net.Server[] = [];
  private readonly sockets = new Set<net.Socket>();
  private tcp: { host: string; port: number } | null = null;
  private listener: UnixListener | null = null;

  constructor(private readonly services: HallServices) {
    this.hub = new AcpHub(services, Math.round(services.config.permission_timeout * 1000));
  }

  status(): Record<string, unknown> {
    return {
      acp: {
        ...(this.tcp ? { host: this.tcp.host, port: this.tcp.port } : {}),
        socket: acpSocketPath(this.services.paths.root),
        sessions: this.hub.count(),
      },
    };
  }

  async start(): Promise<void> {
    this.hub.start();
    this.listener = await listenUnix(this.server(), acpSocketPath(this.services.paths.root));
    const address = acpTcpAddress(this.services);
    if (address) {
      const tcp = this.server();
      try {
        await listen(tcp, address.port, address.host);
      } catch (err) {
        // The local socket serves on; the hall reports the port it was asked for and could not serve.
        throw new Error(`cannot listen on ${address.host}:${address.port}: ${listenProblem(err)} (the port from ${address.from})`);
      }
      const bound = tcp.address() as net.AddressInfo;
      this.tcp = { host: address.host, port: bound.port };
      this.services.publish({ type: 'acp.started', host: address.host, port: bound.port });
    }
  }

  async stop(): Promise<void> {
    for (const server of this.servers) server.close();
    for (const socket of this.sockets) socket.destroy();
    this.hub.stop();
    this.listener?.remove();
  }

  private server(): net.Server {
    const server = net.createServer((socket) => this.serve(socket));
    // An error of the listen itself is start()'s to report, once; this one is for a server that serves.
    server.on('error', (err) => {
      if (server.listening) this.services.log(`ACP listener: ${err.message}`);
    });
    this.servers.push(server);
    return server;
  }

  private serve(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const app = createAcpAgent({
      hub: this.hub,
      sessions: new AcpSessionStore(this.services.store),
      config: this.services.config,
      root: this.services.paths.root,
      log: (line) => this.services.log(line),
    });
    const connection = app.connect(
      ndJsonStream(Writable.toWeb(socket) as WritableStream<Uint8Array>, Readable.toWeb(socket) as ReadableStream<Uint8Array>),
    );
    void connection.closed.finally(() => socket.destroy());
  }
}

function listen(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
